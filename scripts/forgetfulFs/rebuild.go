package main

import (
	"io"
	"os"
	"path/filepath"
)

// rebuild replaces the backing directory with the durable model: what the disk holds after the power
// comes back. It runs once the filesystem is unmounted, so nothing changes the backing meanwhile.
func (m *model) rebuild() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.backing + ".rebuild"
	old := m.backing + ".lost"
	for _, p := range []string{next, old} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if err := m.materialize(m.root, next, map[*durableNode]bool{}); err != nil {
		return err
	}
	if err := os.Rename(m.backing, old); err != nil {
		return err
	}
	if err := os.Rename(next, m.backing); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	return os.RemoveAll(m.store)
}

// materialize writes node n at p. A directory reached twice (moved under one of its own descendants
// between syncs of the two parents) is written at its first place only, as a real fsck would.
func (m *model) materialize(n *durableNode, p string, seen map[*durableNode]bool) error {
	switch n.kind {
	case kindSymlink:
		return os.Symlink(n.target, p)
	case kindFile:
		return m.writeContent(n, p)
	}
	seen[n] = true
	if err := os.Mkdir(p, os.FileMode(n.mode)); err != nil {
		return err
	}
	for name, child := range n.entries {
		if child.kind == kindDir && seen[child] {
			continue
		}
		if err := m.materialize(child, filepath.Join(p, name), seen); err != nil {
			return err
		}
	}
	return nil
}

func (m *model) writeContent(n *durableNode, p string) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(n.mode))
	if err != nil {
		return err
	}
	if n.synced != "" {
		in, err := os.Open(n.synced)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}
