package main

import (
	"context"
	"log"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is go-fuse's loopback node with every changing operation passed through the fault gate and
// reported to the durable model: creations register inodes, fsync and fsyncdir make state durable.

type shared struct {
	model  *model
	faults *faults
}

type node struct {
	*fs.LoopbackNode
	shared *shared
}

func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), shared: n.shared}
}

func (n *node) rel(name string) string {
	return filepath.Join(n.Path(n.Root()), name)
}

func (n *node) backing(name string) string {
	return filepath.Join(n.RootData.Path, n.rel(name))
}

// around runs a changing operation between its two gates.
func (n *node) around(ctx context.Context, op, path string, run func() syscall.Errno) syscall.Errno {
	if errno := n.shared.faults.gate(ctx, "before", op, path); errno != 0 {
		return errno
	}
	if errno := run(); errno != 0 {
		return errno
	}
	return n.shared.faults.gate(ctx, "after", op, path)
}

// created registers a new entry's inode.
func (n *node) created(name string) syscall.Errno {
	return n.modelFailure("create", n.shared.model.created(n.backing(name)))
}

// modelFailure turns a model error into EIO, logged: the model would be blind to this inode.
func (n *node) modelFailure(op string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	log.Printf("%s %s: %v", op, n.rel(""), err)
	return syscall.EIO
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (
	child *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno,
) {
	errno = n.around(ctx, "create", n.rel(name), func() syscall.Errno {
		var e syscall.Errno
		if child, fh, fuseFlags, e = n.LoopbackNode.Create(ctx, name, flags, mode, out); e != 0 {
			return e
		}
		fh = wrapFile(fh)
		return n.created(name)
	})
	return child, fh, fuseFlags, errno
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.newEntry(ctx, "mkdir", name, func() (*fs.Inode, syscall.Errno) {
		return n.LoopbackNode.Mkdir(ctx, name, mode, out)
	})
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.newEntry(ctx, "symlink", name, func() (*fs.Inode, syscall.Errno) {
		return n.LoopbackNode.Symlink(ctx, target, name, out)
	})
}

// newEntry runs a mkdir or symlink through the gates and registers the inode it made.
func (n *node) newEntry(ctx context.Context, op, name string, make func() (*fs.Inode, syscall.Errno)) (
	child *fs.Inode, errno syscall.Errno,
) {
	errno = n.around(ctx, op, n.rel(name), func() syscall.Errno {
		var e syscall.Errno
		if child, e = make(); e != 0 {
			return e
		}
		return n.created(name)
	})
	return child, errno
}

// Link and Mknod are refused: the pipeline uses neither, and the model tracks one name per inode.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.ENOTSUP
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.ENOTSUP
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to := newParent.(*node)
	return n.around(ctx, "rename", n.rel(name)+" -> "+to.rel(newName), func() syscall.Errno {
		return n.LoopbackNode.Rename(ctx, name, to.LoopbackNode, newName, flags)
	})
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.around(ctx, "unlink", n.rel(name), func() syscall.Errno { return n.LoopbackNode.Unlink(ctx, name) })
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.around(ctx, "rmdir", n.rel(name), func() syscall.Errno { return n.LoopbackNode.Rmdir(ctx, name) })
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.around(ctx, "setattr", n.rel(""), func() syscall.Errno { return n.LoopbackNode.Setattr(ctx, f, in, out) })
}

// CopyFileRange is left to the kernel's fallback, which reads and writes, so every byte meets the
// disk-full budget in Write.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle,
	offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (written uint32, errno syscall.Errno) {
	errno = n.around(ctx, "write", n.rel(""), func() syscall.Errno {
		room, e := n.shared.faults.admitWrite(len(data))
		if e != 0 {
			return e
		}
		written, e = f.(fs.FileWriter).Write(ctx, data[:room], off)
		return e
	})
	return written, errno
}

func (n *node) Writev(ctx context.Context, f fs.FileHandle, data [][]byte, off int64) (uint32, syscall.Errno) {
	var joined []byte
	for _, d := range data {
		joined = append(joined, d...)
	}
	return n.Write(ctx, f, joined, off)
}

// Fsync serves fsync and fdatasync of files: the content as it is now becomes what survives a cut.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	return n.around(ctx, "fsync", n.rel(""), func() syscall.Errno {
		if errno := n.shared.faults.admitSync(false); errno != 0 {
			return errno
		}
		h, ok := f.(*fileHandle)
		if !ok {
			return syscall.EBADF
		}
		fd, ok := h.fd()
		if !ok {
			return syscall.EBADF
		}
		return n.modelFailure("fsync", n.shared.model.syncFile(fd))
	})
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	return wrapFile(fh), fuseFlags, errno
}

// OpendirHandle hands out a directory stream whose fsync reaches the model.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, errno := fs.NewLoopbackDirStream(n.backing(""))
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{DirStream: ds, node: n}, 0, 0
}

type dirHandle struct {
	fs.DirStream
	node *node
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.DirStream.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.DirStream.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {
	d.DirStream.(fs.FileReleasedirer).Releasedir(ctx, releaseFlags)
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	n := d.node
	return n.around(ctx, "fsyncdir", n.rel(""), func() syscall.Errno {
		if errno := n.shared.faults.admitSync(true); errno != 0 {
			return errno
		}
		return n.modelFailure("fsyncdir", n.shared.model.syncDir(n.backing("")))
	})
}

// Statx answers for the entry itself, never a symlink's target: go-fuse's loopback passes the
// kernel's flags on, which lack AT_SYMLINK_NOFOLLOW, so a dangling symlink would read as missing and
// `rm -r` of its directory would fail with ENOTEMPTY.
func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if f != nil {
		return n.LoopbackNode.Statx(ctx, f, flags, mask, out)
	}
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, n.backing(""), int(flags)|unix.AT_SYMLINK_NOFOLLOW, int(mask), &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatx(&st)
	return 0
}
