package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// The durable model: what a power cut leaves behind. The live state is the backing directory itself,
// since every operation passes through to it. The model keeps, per inode, a copy of the content at its
// last fsync and, per directory, the entries at its last fsync; whatever is on the backing directory
// at mount time counts as durable. A cut rebuilds the backing directory from the model alone, which is
// LazyFS's model: unsynced file data is lost, and so is an entry change in a directory not fsynced.

type nodeKind int

const (
	kindFile nodeKind = iota
	kindDir
	kindSymlink
)

type durableNode struct {
	id   uint64
	kind nodeKind
	mode uint32
	// synced is the store file with the content at the last fsync; "" means no fsync yet (empty).
	synced string
	target string
	// entries are a directory's names at its last fsync.
	entries map[string]*durableNode
}

type model struct {
	mu      sync.Mutex
	backing string
	store   string
	nextID  uint64
	// byIno maps a live backing inode to its node. An inode number reused after an unlink gets a
	// fresh node, while durable entries keep pointing at the old one.
	byIno map[uint64]*durableNode
	root  *durableNode
}

func newModel(backing, store string) (*model, error) {
	if err := os.RemoveAll(store); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, err
	}
	m := &model{backing: backing, store: store, byIno: map[uint64]*durableNode{}}
	root, err := m.scan(backing)
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", backing, err)
	}
	m.root = root
	return m, nil
}

// scan records what exists at mount time as durable: content copied to the store, entries as listed.
func (m *model) scan(p string) (*durableNode, error) {
	n, err := m.fresh(p)
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case kindFile:
		return n, m.snapshot(n, p)
	case kindDir:
		names, err := readNames(p)
		if err != nil {
			return nil, err
		}
		n.entries = map[string]*durableNode{}
		for _, name := range names {
			child, err := m.scan(filepath.Join(p, name))
			if err != nil {
				return nil, err
			}
			n.entries[name] = child
		}
	}
	return n, nil
}

// fresh registers a newly created backing inode (create, mkdir, symlink) with nothing durable yet.
func (m *model) fresh(p string) (*durableNode, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return nil, err
	}
	m.nextID++
	n := &durableNode{id: m.nextID, mode: st.Mode & 0o7777}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		n.kind = kindDir
	case syscall.S_IFLNK:
		n.kind = kindSymlink
		target, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		n.target = target
	}
	m.byIno[st.Ino] = n
	return n, nil
}

func (m *model) created(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.fresh(p)
	return err
}

// nodeOf finds the node of a live inode; one the model never saw (hard link targets aside, there are
// none) counts as created now.
func (m *model) nodeOf(p string, ino uint64) (*durableNode, error) {
	if n, ok := m.byIno[ino]; ok {
		return n, nil
	}
	return m.fresh(p)
}

// syncFile makes the content of the open file fd durable, as fsync and fdatasync do.
func (m *model) syncFile(fd int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	n, ok := m.byIno[st.Ino]
	if !ok {
		return fmt.Errorf("fsync of an inode the model does not know (%d)", st.Ino)
	}
	n.mode = st.Mode & 0o7777
	// The handle may be write-only; its /proc link reopens the same inode for reading.
	return m.snapshot(n, fmt.Sprintf("/proc/self/fd/%d", fd))
}

// syncDir makes a directory's current entries durable (each entry's content stays as last synced).
func (m *model) syncDir(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return err
	}
	dir, err := m.nodeOf(p, st.Ino)
	if err != nil {
		return err
	}
	names, err := readNames(p)
	if err != nil {
		return err
	}
	entries := map[string]*durableNode{}
	for _, name := range names {
		child := filepath.Join(p, name)
		var cst syscall.Stat_t
		if err := syscall.Lstat(child, &cst); err != nil {
			return err
		}
		if entries[name], err = m.nodeOf(child, cst.Ino); err != nil {
			return err
		}
	}
	dir.entries = entries
	return nil
}

func (m *model) snapshot(n *durableNode, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return m.snapshotFd(n, int(f.Fd()))
}

func (m *model) snapshotFd(n *durableNode, fd int) error {
	dst := filepath.Join(m.store, strconv.FormatUint(n.id, 10))
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	// A section reader preads from offset 0, so the caller's file offset is left alone.
	src := io.NewSectionReader(fdReaderAt(fd), 0, 1<<62)
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	n.synced = dst
	return nil
}

type fdReaderAt int

func (fd fdReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := syscall.Pread(int(fd), p, off)
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func readNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}
