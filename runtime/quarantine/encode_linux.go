//go:build linux

package quarantine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// The snapshot file: a magic line, then varints and length-prefixed
// strings, depth first. It is srt's own state (read-only in every
// sandbox); it is still read with bounds, as anything on disk.
const snapMagic = "srt-snapshot 2\n"

// MaxSnapshotFile is the largest snapshot file read.
const MaxSnapshotFile = 512 << 20

// WriteFile writes s to path (atomically: a temporary file renamed).
func (s *Snapshot) WriteFile(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".snap-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	e := &enc{w: bw}
	e.str(snapMagic)
	e.int(s.Taken)
	hooks := make([]string, 0, len(s.Hooks))
	for h := range s.Hooks {
		hooks = append(hooks, h)
	}
	sort.Strings(hooks)
	e.uint(uint64(len(hooks)))
	for _, h := range hooks {
		e.str(h)
		e.str(s.Hooks[h])
	}
	e.uint(uint64(len(s.RelHooks)))
	for _, h := range s.RelHooks {
		e.str(h)
	}
	e.uint(uint64(len(s.Watched)))
	for _, p := range sortedKeys(s.Watched) {
		e.str(p)
		e.bools(s.Watched[p] != nil)
		if l := s.Watched[p]; l != nil {
			e.leaf(l)
		}
	}
	e.uint(uint64(len(s.Roots)))
	for _, r := range s.Roots {
		e.str(r.Path)
		e.bools(r.Local, r.Partial, r.Dir != nil, r.File != nil)
		if r.Dir != nil {
			e.node(r.Dir)
		}
		if r.File != nil {
			e.leaf(r.File)
		}
	}
	if err := errors.Join(e.err, bw.Flush(), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

type enc struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
	err error
}

func (e *enc) uint(v uint64) {
	n := binary.PutUvarint(e.buf[:], v)
	if _, err := e.w.Write(e.buf[:n]); err != nil && e.err == nil {
		e.err = err
	}
}
func (e *enc) int(v int64) { e.uint(uint64(v<<1) ^ uint64(v>>63)) }
func (e *enc) str(s string) {
	e.uint(uint64(len(s)))
	e.w.WriteString(s)
}
func (e *enc) bools(bs ...bool) {
	var v uint64
	for i, b := range bs {
		if b {
			v |= 1 << i
		}
	}
	e.uint(v)
}
func (e *enc) ident(id ident) {
	e.uint(id.Dev)
	e.uint(id.Ino)
	e.uint(uint64(id.Mode))
	e.int(id.Size)
	e.int(id.Mtime)
	e.int(id.Ctime)
}
func (e *enc) node(n *node) {
	e.ident(n.id)
	e.bools(n.ctx.git, n.ctx.hooks, n.ctx.skip, n.read)
	e.str(n.ctx.tree)
	e.uint(uint64(len(n.dirs)))
	for _, name := range sortedKeys(n.dirs) {
		e.str(name)
		e.node(n.dirs[name])
	}
	e.uint(uint64(len(n.leaves)))
	for _, name := range sortedKeys(n.leaves) {
		e.str(name)
		e.leaf(n.leaves[name])
	}
}
func (e *enc) leaf(l *leaf) {
	e.ident(l.id)
	e.bools(l.hashed)
	if l.hashed {
		e.w.Write(l.sum[:])
	}
	e.str(l.link)
	e.uint(uint64(len(l.hooks)))
	for _, h := range l.hooks {
		e.str(h)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ReadSnapshot reads a snapshot file.
func ReadSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxSnapshotFile {
		return nil, fmt.Errorf("%s: not a snapshot file", path)
	}
	d := &dec{r: bufio.NewReaderSize(f, 64<<10), left: fi.Size()}
	s := d.snapshot()
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", path, d.err)
	}
	return s, nil
}

var errSnapshot = errors.New("damaged snapshot")

type dec struct {
	r    *bufio.Reader
	left int64 // bytes the file has left: no count may exceed it
	err  error
}

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = errSnapshot
	}
	d.left--
	return v
}
func (d *dec) int() int64 {
	u := d.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a number of things that take at least one byte each.
func (d *dec) count() int {
	n := d.uint()
	if n > uint64(d.left) {
		d.err = errSnapshot
		return 0
	}
	return int(n)
}
func (d *dec) str() string {
	n := d.count()
	if d.err != nil || n == 0 {
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = errSnapshot
		return ""
	}
	d.left -= int64(n)
	return string(b)
}
func (d *dec) bools(n int) []bool {
	v := d.uint()
	out := make([]bool, n)
	for i := range out {
		out[i] = v&(1<<i) != 0
	}
	return out
}
func (d *dec) ident() ident {
	return ident{Dev: d.uint(), Ino: d.uint(), Mode: uint32(d.uint()), Size: d.int(), Mtime: d.int(), Ctime: d.int()}
}

func (d *dec) snapshot() *Snapshot {
	if d.str() != snapMagic {
		d.err = errSnapshot
		return nil
	}
	s := &Snapshot{Taken: d.int(), Hooks: map[string]string{}}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		h := d.str()
		s.Hooks[h] = d.str()
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		s.RelHooks = append(s.RelHooks, d.str())
	}
	s.Watched = map[string]*leaf{}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		p := d.str()
		s.Watched[p] = nil
		if d.bools(1)[0] {
			s.Watched[p] = d.leaf()
		}
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		r := &rootSnap{Path: d.str()}
		b := d.bools(4)
		r.Local, r.Partial = b[0], b[1]
		if b[2] {
			r.Dir = d.node(0)
		}
		if b[3] {
			r.File = d.leaf()
		}
		s.Roots = append(s.Roots, r)
	}
	return s
}

func (d *dec) node(depth int) *node {
	if depth > MaxDepth+1 {
		d.err = errSnapshot
		return nil
	}
	n := &node{id: d.ident()}
	b := d.bools(4)
	n.ctx = dirCtx{git: b[0], hooks: b[1], skip: b[2], tree: d.str()}
	n.read = b[3]
	if k := d.count(); k > 0 {
		n.dirs = make(map[string]*node, k)
		for ; k > 0 && d.err == nil; k-- {
			name := d.str()
			n.dirs[name] = d.node(depth + 1)
		}
	}
	if k := d.count(); k > 0 {
		n.leaves = make(map[string]*leaf, k)
		for ; k > 0 && d.err == nil; k-- {
			name := d.str()
			n.leaves[name] = d.leaf()
		}
	}
	return n
}

func (d *dec) leaf() *leaf {
	l := &leaf{id: d.ident()}
	if d.bools(1)[0] {
		l.hashed = true
		if _, err := io.ReadFull(d.r, l.sum[:]); err != nil {
			d.err = errSnapshot
		}
		d.left -= 32
	}
	l.link = d.str()
	for n := d.count(); n > 0 && d.err == nil; n-- {
		l.hooks = append(l.hooks, d.str())
	}
	return l
}
