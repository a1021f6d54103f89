//go:build linux

package quarantine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/internal/untrusted"
	"srt.dev/runtime/private"
)

// A Store is the quarantine: one directory per item, private to the user,
// hidden from every sandbox.
type Store struct {
	Dir string
}

// Open returns the store in dir, creating it private to the user.
func Open(dir string) (*Store, error) {
	if err := private.Dir(dir); err != nil {
		return nil, err
	}
	return &Store{Dir: dir}, nil
}

// Move moves each finding into the store, until deadline (zero: no
// deadline): left are the findings it did not come to, in their order. A
// name that cannot be moved is reported in the error and left where it
// is. Findings that share a directory (in the order Check reports them)
// reach it once.
func (s *Store) Move(found []Finding, deadline time.Time) (items []Item, left []Finding, err error) {
	var errs []error
	var dirs parentCache
	defer dirs.close()
	for i, f := range found {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return items, found[i:], errors.Join(errs...)
		}
		it, err := s.move(f, &dirs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", f.Path(), err))
			continue
		}
		items = append(items, it)
	}
	return items, nil, errors.Join(errs...)
}

// A parentCache keeps the directory the last finding was in open, for
// the next one in the same directory.
type parentCache struct {
	key string // root and relative directory
	fd  int
}

// open is openParent(root, rel), from the cache when the directory is the
// last one's; the cache owns the descriptor.
func (c *parentCache) open(root, rel string) (int, string, error) {
	key := root + "\x00" + filepath.Dir(rel)
	if rel != "" && c.key == key && c.fd >= 0 {
		return c.fd, filepath.Base(rel), nil
	}
	c.close()
	fd, name, err := openParent(root, rel)
	if err != nil {
		return -1, "", err
	}
	c.key, c.fd = key, fd
	return fd, name, nil
}

func (c *parentCache) close() {
	if c.key != "" {
		unix.Close(c.fd)
	}
	c.key, c.fd = "", -1
}

func newID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// openParent opens the directory holding rel below root (root's own
// directory when rel is ""), following no link on the way, and returns
// it with the entry's name.
func openParent(root, rel string) (fd int, name string, err error) {
	if rel == "" {
		fd, err = openRoot(filepath.Dir(root))
		return fd, filepath.Base(root), err
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return -1, "", fmt.Errorf("%q is not a path below %q", rel, root)
		}
	}
	if fd, err = openRoot(root); err != nil {
		return -1, "", err
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := openDirAt(fd, p)
		unix.Close(fd)
		if err != nil {
			return -1, "", fmt.Errorf("%s: %w (a link or something else on the way?)", untrusted.Quote(p), err)
		}
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

func kindOf(id ident) string {
	switch {
	case id.isReg():
		return "file"
	case id.isLink():
		return "link"
	case id.isDir():
		return "directory"
	}
	return "special"
}

func (s *Store) move(f Finding, dirs *parentCache) (Item, error) {
	it := Item{ID: newID(), Path: f.Path(), Root: f.Root, Why: f.Why, Time: time.Now().UTC()}
	parent, name, err := dirs.open(f.Root, f.Rel)
	if err != nil {
		return it, err
	}
	id, err := lstatAt(parent, name)
	if err != nil {
		return it, err
	}
	if !id.sameInode(f.id) || id.typ() != f.id.typ() {
		return it, errors.New("replaced since the check; not moved (check it by hand)")
	}
	it.Kind = kindOf(id)
	d := filepath.Join(s.Dir, it.ID)
	if err := os.Mkdir(d, 0o700); err != nil {
		return it, err
	}
	dfd, err := openRoot(d)
	if err != nil {
		os.RemoveAll(d)
		return it, err
	}
	defer unix.Close(dfd)
	if err := moveOut(parent, name, id, dfd, &it); err != nil {
		os.RemoveAll(d)
		return it, err
	}
	meta, _ := json.MarshalIndent(it, "", "  ")
	if err := os.WriteFile(filepath.Join(d, "item.json"), append(meta, '\n'), 0o600); err != nil {
		return it, fmt.Errorf("moved to %s, but its record could not be written: %w", d, err)
	}
	return it, nil
}

// moveOut moves the entry name of parent (seen as id) to "data" in the
// item's directory dfd: renamed, or across file systems copied and
// removed. A directory that cannot leave its file system is renamed
// beside itself (it.InPlace), which takes its protected name away; a
// FIFO, socket or device is removed.
func moveOut(parent int, name string, id ident, dfd int, it *Item) error {
	err := unix.Renameat(parent, name, dfd, "data")
	if errors.Is(err, unix.EACCES) && id.isDir() && reopenOwn(parent, name, id) == nil {
		// A directory of the user's that the command took the write
		// permission from (moving it rewrites its ".."): its owner gives
		// it back.
		err = unix.Renameat(parent, name, dfd, "data")
	}
	if err == nil || !errors.Is(err, unix.EXDEV) {
		return err
	}
	switch {
	case id.isReg():
		if err := copyFile(parent, name, id, dfd, "data"); err != nil {
			return err
		}
	case id.isLink():
		target, err := readLinkAt(parent, name)
		if err != nil {
			return err
		}
		if err := unix.Symlinkat(target, dfd, "data"); err != nil {
			return err
		}
	case id.isDir():
		it.InPlace = name + ".srt-quarantine-" + it.ID
		return unix.Renameat2(parent, name, parent, it.InPlace, unix.RENAME_NOREPLACE)
	}
	return unix.Unlinkat(parent, name, 0)
}

// reopenOwn gives the owner of the directory name of parent (seen as id),
// when it is this user, read, write and search permission on it again,
// reaching the very inode the walk saw (through an O_PATH descriptor,
// never following a link).
func reopenOwn(parent int, name string, id ident) error {
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if got := identOf(&st); !got.sameInode(id) || int(st.Uid) != unix.Geteuid() {
		return errors.New("not the directory the check saw, or not this user's")
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o700)
}

// copyFile copies the regular file name of from (seen as id) to a new
// file to in dir.
func copyFile(from int, name string, id ident, dir int, to string) error {
	in, err := unix.Openat(from, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	src := os.NewFile(uintptr(in), name)
	defer src.Close()
	if got, err := fstatFD(in); err != nil || !got.sameInode(id) || !got.isReg() {
		return errNotRegular
	}
	out, err := unix.Openat(dir, to, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, id.Mode&0o700)
	if err != nil {
		return err
	}
	dst := os.NewFile(uintptr(out), to)
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// List returns the items, oldest first.
func (s *Store) List() ([]Item, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, e := range entries {
		it, err := s.item(e.Name())
		if err == nil {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Store) item(id string) (Item, error) {
	var it Item
	if id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return it, fmt.Errorf("%q is not a quarantine item", id)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, id, "item.json"))
	if err != nil {
		return it, fmt.Errorf("no quarantine item %q (srt quarantine list shows them)", id)
	}
	if err := json.Unmarshal(b, &it); err != nil || it.ID != id || !filepath.IsAbs(it.Path) {
		return it, fmt.Errorf("quarantine item %q is damaged; remove %q by hand", id, filepath.Join(s.Dir, id))
	}
	return it, nil
}

// Data is the path of an item's quarantined content (to inspect it).
func (s *Store) Data(id string) string { return filepath.Join(s.Dir, id, "data") }

// where is the root and relative path Release puts an item back at: from
// its write root, or from "/" for an item recorded without one.
func (it Item) where() (root, rel string, err error) {
	root = it.Root
	if root == "" {
		root = "/"
	}
	rel, err = filepath.Rel(root, it.Path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("quarantine item %q: %q is not below %q", it.ID, it.Path, root)
	}
	if rel == "." {
		rel = ""
	}
	return root, rel, nil
}

// Release puts an item back where it was, reaching it from its write root
// without following a link; it refuses when something is there again.
func (s *Store) Release(id string) (Item, error) {
	it, err := s.item(id)
	if err != nil {
		return it, err
	}
	root, rel, err := it.where()
	if err != nil {
		return it, err
	}
	parent, name, err := openParent(root, rel)
	if err != nil {
		return it, fmt.Errorf("%q cannot be reached without following a link: %w", it.Path, err)
	}
	defer unix.Close(parent)
	if _, err := lstatAt(parent, name); err == nil {
		return it, fmt.Errorf("%q exists again; move it away first, or drop the item", it.Path)
	}
	switch {
	case it.InPlace != "":
		err = unix.Renameat2(parent, it.InPlace, parent, name, unix.RENAME_NOREPLACE)
	case it.Kind == "special":
		err = fmt.Errorf("%q was a FIFO, socket or device: srt removed it, there is nothing to put back (drop the item)", it.Path)
	default:
		err = s.putBack(id, parent, name)
	}
	if err != nil {
		return it, err
	}
	return it, os.RemoveAll(filepath.Join(s.Dir, id))
}

// putBack moves an item's data to name in parent.
func (s *Store) putBack(id string, parent int, name string) error {
	dfd, err := openRoot(filepath.Join(s.Dir, id))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = unix.Renameat2(dfd, "data", parent, name, unix.RENAME_NOREPLACE)
	if err == nil || !errors.Is(err, unix.EXDEV) {
		return err
	}
	did, err := lstatAt(dfd, "data")
	if err != nil {
		return err
	}
	switch {
	case did.isReg():
		return copyFile(dfd, "data", did, parent, name)
	case did.isLink():
		target, err := readLinkAt(dfd, "data")
		if err != nil {
			return err
		}
		return unix.Symlinkat(target, parent, name)
	}
	return fmt.Errorf("a %s cannot be put back across file systems", kindOf(did))
}

// Drop deletes an item (and, for one kept beside where it was, what was
// renamed there).
func (s *Store) Drop(id string) (Item, error) {
	it, err := s.item(id)
	if err != nil {
		return it, err
	}
	if it.InPlace != "" {
		root, rel, err := it.where()
		if err != nil {
			return it, err
		}
		parent, _, err := openParent(root, rel)
		if err != nil {
			return it, err
		}
		err = removeTree(parent, it.InPlace, 0)
		unix.Close(parent)
		if err != nil {
			return it, err
		}
	}
	return it, os.RemoveAll(filepath.Join(s.Dir, id))
}

// removeTree removes the entry name of parent and, for a directory,
// everything below it, following no link.
func removeTree(parent int, name string, depth int) error {
	id, err := lstatAt(parent, name)
	if err != nil {
		return err
	}
	if !id.isDir() {
		return unix.Unlinkat(parent, name, 0)
	}
	if depth > MaxDepth {
		return fmt.Errorf("more than %d levels deep", MaxDepth)
	}
	fd, err := openDirAt(parent, name)
	if err != nil {
		return err
	}
	ents, err := readDir(fd, DefaultLimits.DirEntries)
	if err == nil {
		for _, e := range ents {
			if err = removeTree(fd, e.name, depth+1); err != nil {
				break
			}
		}
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
}
