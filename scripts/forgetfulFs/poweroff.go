package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// stopTimeout bounds a power-off: unmounting and rebuilding the backing directory of a run take a
// second or two, so a power-off still going after this has hung.
const stopTimeout = 30 * time.Second

// stop unmounts; with lose, it then rebuilds the backing directory from the durable model. One that
// hangs is given up after stopTimeout with a diagnosis on stderr naming the step and what it waits for.
func stop(server *fuse.Server, mounted mountIdentity, sh *shared, lose bool) error {
	var step atomic.Value
	step.Store("beginning the power-off")
	done := make(chan error, 1)
	go func() { done <- powerDown(server, mounted.point, sh, lose, func(s string) { step.Store(s) }) }()
	select {
	case err := <-done:
		return err
	case <-time.After(stopTimeout):
		at := step.Load().(string)
		fmt.Fprint(os.Stderr, diagnose(mounted, at))
		return fmt.Errorf("%s did not finish within %v (diagnosis on stderr)", at, stopTimeout)
	}
}

// powerDown does stop's steps, naming each before it starts. Operations still frozen fail with EIO
// first: their processes are dead, and the kernel waits for an answer before it lets them go.
//
// The unmount aborts the FUSE connection (MNT_FORCE: the kernel's fuse_umount_begin) rather than
// waiting for it to end. A plain unmount ends the connection only with the filesystem's last mount
// in any mount namespace, and a namespace made while it is mounted (the fleet harness's hosts,
// `unshare -m`, a container) holds a copy this unmount does not reach; an open file keeps a detached
// mount alive too. The server would wait for them, and the power-off with it. Aborted, every request
// in flight or to come fails, and the server's readers end at once, as a disk without power answers
// nothing. Requests already being served finish first, so the backing directory is still once
// server.Wait returns.
func powerDown(server *fuse.Server, mountPoint string, sh *shared, lose bool, step func(string)) error {
	if lose {
		sh.faults.beginCut()
	}
	step("unmounting " + mountPoint + " with its FUSE connection aborted")
	if err := syscall.Unmount(mountPoint, syscall.MNT_FORCE); err != nil {
		step("detaching " + mountPoint + " (busy: " + err.Error() + ")")
		if err := syscall.Unmount(mountPoint, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", mountPoint, err)
		}
	}
	step("waiting for the FUSE server to end")
	server.Wait()
	if !lose {
		step("removing the durable model")
		return os.RemoveAll(sh.model.store)
	}
	step("rebuilding the backing directory")
	return sh.model.rebuild()
}
