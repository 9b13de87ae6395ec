package main

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// fileHandle forwards go-fuse's loopback file except its passthrough descriptor: with kernel FUSE
// passthrough, reads and writes would go straight to the backing file and never reach the model or
// the disk-full budget.
type fileHandle struct {
	lf *fs.LoopbackFile
}

func wrapFile(fh fs.FileHandle) fs.FileHandle {
	if lf, ok := fh.(*fs.LoopbackFile); ok {
		return &fileHandle{lf: lf}
	}
	return fh
}

// fd is the backing descriptor, for the model's snapshot at fsync.
func (h *fileHandle) fd() (int, bool) {
	return h.lf.PassthroughFd()
}

func (h *fileHandle) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return h.lf.Read(ctx, buf, off)
}

func (h *fileHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return h.lf.Write(ctx, data, off)
}

func (h *fileHandle) Release(ctx context.Context) syscall.Errno {
	return h.lf.Release(ctx)
}

func (h *fileHandle) Flush(ctx context.Context) syscall.Errno {
	return h.lf.Flush(ctx)
}

func (h *fileHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.lf.Getattr(ctx, out)
}

func (h *fileHandle) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return h.lf.Setattr(ctx, in, out)
}

func (h *fileHandle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return h.lf.Lseek(ctx, off, whence)
}

func (h *fileHandle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return h.lf.Allocate(ctx, off, size, mode)
}
