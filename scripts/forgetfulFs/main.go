// forgetful-fs: a FUSE passthrough filesystem that forgets what was not fsynced when the power is
// cut, and can run out of space. The chaos harness mounts the artifacts root on it.
//
//	forgetful-fs -backing DIR -mount DIR -control SOCKET
//
// It prints "ready" once mounted and serves the control socket (see control.go). SIGTERM unmounts
// cleanly, keeping everything, as a clean shutdown flushes all caches.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func main() {
	backing := flag.String("backing", "", "directory that holds the live state")
	mountPoint := flag.String("mount", "", "where to mount")
	control := flag.String("control", "", "unix socket for the harness")
	flag.Parse()
	if *backing == "" || *mountPoint == "" || *control == "" {
		fmt.Fprintln(os.Stderr, "usage: forgetful-fs -backing DIR -mount DIR -control SOCKET")
		os.Exit(2)
	}
	if err := run(*backing, *mountPoint, *control); err != nil {
		fmt.Fprintf(os.Stderr, "forgetful-fs: %v\n", err)
		os.Exit(1)
	}
}

func run(backing, mountPoint, control string) error {
	m, err := newModel(backing, backing+".durable")
	if err != nil {
		return err
	}
	sh := &shared{model: m, faults: newFaults()}
	server, err := mount(backing, mountPoint, sh)
	if err != nil {
		return err
	}
	mounted := identify(mountPoint)
	var once sync.Once
	var offErr error
	powerOff := func(lose bool) error {
		once.Do(func() { offErr = stop(server, mounted, sh, lose) })
		return offErr
	}
	os.Remove(control)
	l, err := net.Listen("unix", control)
	if err != nil {
		powerOff(false)
		return err
	}
	go (&controller{shared: sh, powerOff: powerOff}).serve(l)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		if err := powerOff(false); err != nil {
			fmt.Fprintf(os.Stderr, "forgetful-fs: unmount: %v\n", err)
			os.Exit(1)
		}
		exitNow()
	}()
	fmt.Println("ready")
	server.Wait()
	// The kernel ended the mount (umount from outside): keep serving the socket until told to stop.
	select {}
}

func mount(backing, mountPoint string, sh *shared) (*fuse.Server, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, err
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	rootNode := &node{LoopbackNode: &fs.LoopbackNode{RootData: root}, shared: sh}
	root.RootNode = rootNode
	second := time.Second
	return fs.Mount(mountPoint, rootNode, &fs.Options{
		EntryTimeout: &second,
		AttrTimeout:  &second,
		MountOptions: fuse.MountOptions{DirectMountStrict: true, FsName: backing, Name: "forgetful"},
	})
}

func exitNow() {
	os.Exit(0)
}
