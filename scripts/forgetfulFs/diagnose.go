package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// A power-off that stalls must name what it waits for, or the next stall is a mystery again. The
// diagnosis lists the daemon's goroutines, every mount namespace that still has a copy of the mount,
// every process that holds a file or directory on it, and the threads asleep in the kernel on one of
// its requests.

// mountIdentity names the mount in /proc: its mount ID, which a file opened through it keeps even once
// the mount is detached, and its device, which every copy of it in another namespace shares.
type mountIdentity struct {
	point string
	id    string
	dev   string
}

func identify(mountPoint string) mountIdentity {
	m := mountIdentity{point: mountPoint}
	data, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == mountPoint {
			m.id, m.dev = f[0], f[2]
		}
	}
	return m
}

func diagnose(m mountIdentity, step string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "forgetful-fs: stalled in %s\n", step)
	copies, ids := copiesOf(m)
	fmt.Fprintf(&b, "--- mounts of device %s, per mount namespace\n%s", m.dev, copies)
	fmt.Fprintf(&b, "--- processes holding a file or directory on it\n%s", holders(m, ids))
	fmt.Fprintf(&b, "--- other threads asleep in FUSE\n%s", blockedTasks())
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	fmt.Fprintf(&b, "--- goroutines\n%s\n", buf)
	return b.String()
}

func processes() []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func command(pid string) string {
	comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
	return strings.TrimSpace(string(comm))
}

// copiesOf lists, once per mount namespace, the mounts of the filesystem's device, and returns their
// mount IDs with the daemon's own.
func copiesOf(m mountIdentity) (string, map[string]bool) {
	var b strings.Builder
	ids := map[string]bool{m.id: true}
	seen := map[string]bool{}
	for _, pid := range processes() {
		ns, err := os.Readlink(filepath.Join("/proc", pid, "ns", "mnt"))
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		data, _ := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[2] == m.dev {
				ids[f[0]] = true
				fmt.Fprintf(&b, "%s (pid %s, %s): mount %s at %s\n", ns, pid, command(pid), f[0], f[4])
			}
		}
	}
	return b.String(), ids
}

// holders lists the processes with a descriptor on one of the mounts `ids`, or a working or root
// directory under the mount point: each keeps a detached mount, and the FUSE connection, alive.
func holders(m mountIdentity, ids map[string]bool) string {
	var b strings.Builder
	under := func(t string) bool { return t == m.point || strings.HasPrefix(t, m.point+"/") }
	for _, pid := range processes() {
		var held []string
		for _, link := range []string{"cwd", "root"} {
			if t, err := os.Readlink(filepath.Join("/proc", pid, link)); err == nil && under(t) {
				held = append(held, link+"="+t)
			}
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", pid, "fd"))
		for _, fd := range fds {
			info, _ := os.ReadFile(filepath.Join("/proc", pid, "fdinfo", fd.Name()))
			if ids[fieldOf(string(info), "mnt_id:")] {
				t, _ := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
				held = append(held, "fd "+fd.Name()+"="+t)
			}
		}
		if len(held) > 0 {
			fmt.Fprintf(&b, "pid %s (%s): %s\n", pid, command(pid), strings.Join(held, ", "))
		}
	}
	return b.String()
}

func fieldOf(text, key string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// blockedTasks lists the threads whose kernel stack passes through FUSE, such as a killed worker that
// cannot exit before its request is answered; not a daemon's reader waiting for a request (this
// daemon's own threads are in the goroutine dump).
func blockedTasks() string {
	var b strings.Builder
	self := strconv.Itoa(os.Getpid())
	for _, pid := range processes() {
		if pid == self {
			continue
		}
		tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
		for _, task := range tasks {
			stack, err := os.ReadFile(filepath.Join("/proc", pid, "task", task.Name(), "stack"))
			text := string(stack)
			if err == nil && strings.Contains(text, "fuse") && !strings.Contains(text, "fuse_dev_do_read") {
				fmt.Fprintf(&b, "pid %s task %s (%s):\n%s", pid, task.Name(), command(pid), text)
			}
		}
	}
	return b.String()
}
