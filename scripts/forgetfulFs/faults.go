package main

import (
	"context"
	"regexp"
	"sync"
	"syscall"
)

// faults decides, per operation, whether it proceeds: a trigger the harness armed freezes the whole
// filesystem at a chosen operation (so a power cut lands exactly there), and a disk-full budget turns
// writes into ENOSPC and then EIO.

type trigger struct {
	when string // "before" or "after" the operation
	op   string // an operation name, or "any"
	path *regexp.Regexp
	nth  int
	seen int
	// fired receives "<op> <path>" once, when the nth matching operation arrives.
	fired chan string
}

type counters struct {
	Writes       int64 `json:"writes"`
	BytesWritten int64 `json:"bytes_written"`
	Fsyncs       int64 `json:"fsyncs"`
	Fsyncdirs    int64 `json:"fsyncdirs"`
	Enospc       int64 `json:"enospc"`
	Eio          int64 `json:"eio"`
}

type faults struct {
	mu      sync.Mutex
	armed   *trigger
	frozen  bool
	cutting bool
	thaw    *sync.Cond
	// bytesLeft is the room left on the "disk"; < 0 means unlimited.
	bytesLeft int64
	// enospcLeft is how many writes fail with ENOSPC before the disk fails with EIO.
	enospcLeft int64
	stats      counters
}

func newFaults() *faults {
	f := &faults{bytesLeft: -1}
	f.thaw = sync.NewCond(&f.mu)
	return f
}

// gate is called before ("before") and after ("after") each changing operation. It blocks while the
// filesystem is frozen, and fails everything once a cut has begun: the host is off. A blocked caller
// that is killed is let go (the kernel interrupts its request), since the kernel cannot reap a process
// whose request the filesystem still holds.
func (f *faults) gate(ctx context.Context, when, op, path string) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.thaw.Broadcast()
	})
	defer stop()
	if t := f.armed; t != nil && !f.frozen && t.when == when && (t.op == "any" || t.op == op) && t.path.MatchString(path) {
		t.seen++
		if t.seen == t.nth {
			f.frozen = true
			f.armed = nil
			t.fired <- op + " " + path
		}
	}
	for f.frozen && !f.cutting && ctx.Err() == nil {
		f.thaw.Wait()
	}
	switch {
	case f.cutting:
		return syscall.EIO
	case f.frozen:
		return syscall.EINTR
	}
	return 0
}

func (f *faults) arm(t *trigger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = t
}

// disarm drops a trigger that has not fired. It reports whether the filesystem is frozen, i.e. the
// trigger fired after the harness stopped waiting for it: the harness must then cut, or every
// changing operation stays blocked.
func (f *faults) disarm() (frozen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = nil
	return f.frozen
}

// beginCut fails every operation in flight or to come, and releases the frozen ones.
func (f *faults) beginCut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutting = true
	f.thaw.Broadcast()
}

func (f *faults) fill(bytesLeft, enospcCount int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bytesLeft, f.enospcLeft = bytesLeft, enospcCount
}

// free gives the disk its room back, as deleting files on a real one would.
func (f *faults) free() {
	f.fill(-1, 0)
}

// admitWrite says how many of n bytes fit; 0 with an errno when none do.
func (f *faults) admitWrite(n int) (int, syscall.Errno) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Writes++
	if f.bytesLeft < 0 {
		f.stats.BytesWritten += int64(n)
		return n, 0
	}
	if f.bytesLeft == 0 {
		return 0, f.diskError()
	}
	if int64(n) > f.bytesLeft {
		n = int(f.bytesLeft)
	}
	f.bytesLeft -= int64(n)
	f.stats.BytesWritten += int64(n)
	return n, 0
}

// admitSync fails an fsync once the disk has gone to EIO: the data it was asked to keep is not kept.
func (f *faults) admitSync(dir bool) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	if dir {
		f.stats.Fsyncdirs++
	} else {
		f.stats.Fsyncs++
	}
	if f.bytesLeft == 0 && f.enospcLeft == 0 {
		f.stats.Eio++
		return syscall.EIO
	}
	return 0
}

func (f *faults) diskError() syscall.Errno {
	if f.enospcLeft > 0 {
		f.enospcLeft--
		f.stats.Enospc++
		return syscall.ENOSPC
	}
	f.stats.Eio++
	return syscall.EIO
}

func (f *faults) snapshot() counters {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}
