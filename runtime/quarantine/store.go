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
	"strings"
	"time"

	"srt.dev/runtime/private"
)

// A Store is the quarantine: one directory per item, private to the user,
// read-only in every sandbox.
type Store struct {
	Dir string
}

// DefaultDir is $XDG_STATE_HOME/srt/quarantine, or
// ~/.local/state/srt/quarantine.
func DefaultDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "srt", "quarantine"), nil
}

// Open returns the store in dir, creating it private to the user.
func Open(dir string) (*Store, error) {
	if err := private.Dir(dir); err != nil {
		return nil, err
	}
	return &Store{Dir: dir}, nil
}

// Move moves each finding into the store. A name that cannot be moved is
// reported in the error and left where it is.
func (s *Store) Move(found []Finding) ([]Item, error) {
	var items []Item
	var errs []error
	for _, f := range found {
		it, err := s.move(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.Path, err))
			continue
		}
		items = append(items, it)
	}
	return items, errors.Join(errs...)
}

func (s *Store) move(f Finding) (Item, error) {
	b := make([]byte, 4)
	rand.Read(b)
	now := time.Now().UTC()
	it := Item{ID: now.Format("20060102-150405") + "-" + hex.EncodeToString(b), Path: f.Path, Why: f.Why, Time: now}
	d := filepath.Join(s.Dir, it.ID)
	if err := os.Mkdir(d, 0o700); err != nil {
		return it, err
	}
	meta, _ := json.MarshalIndent(it, "", "  ")
	if err := os.WriteFile(filepath.Join(d, "item.json"), append(meta, '\n'), 0o600); err != nil {
		os.RemoveAll(d)
		return it, err
	}
	if err := moveFile(f.Path, filepath.Join(d, "data")); err != nil {
		os.RemoveAll(d)
		return it, err
	}
	return it, nil
}

// moveFile renames src to dst, or copies and removes it across file
// systems (src is never a directory).
func moveFile(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscallEXDEV) {
		return err
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		return os.Remove(src)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("a %v cannot be moved across file systems; remove it by hand", fi.Mode().Type())
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(src)
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
		return it, fmt.Errorf("quarantine item %q is damaged; remove %s by hand", id, filepath.Join(s.Dir, id))
	}
	return it, nil
}

// Data is the path of an item's quarantined content (to inspect it).
func (s *Store) Data(id string) string { return filepath.Join(s.Dir, id, "data") }

// Release puts an item back where it was; it refuses when something is
// there again.
func (s *Store) Release(id string) (Item, error) {
	it, err := s.item(id)
	if err != nil {
		return it, err
	}
	if _, err := os.Lstat(it.Path); err == nil {
		return it, fmt.Errorf("%s exists again; move it away first, or drop the item", it.Path)
	}
	if err := moveFile(s.Data(id), it.Path); err != nil {
		return it, err
	}
	return it, os.RemoveAll(filepath.Join(s.Dir, id))
}

// Drop deletes an item.
func (s *Store) Drop(id string) (Item, error) {
	it, err := s.item(id)
	if err != nil {
		return it, err
	}
	return it, os.RemoveAll(filepath.Join(s.Dir, id))
}
