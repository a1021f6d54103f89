//go:build unix

// Package private makes and checks directories that belong to this user
// alone, for files whose content srt trusts: placeholder records and the
// cache of compiled policies.
package private

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"srt.dev/internal/untrusted"
)

// Dir creates dir (mode 0700) and checks that it and its parent belong to
// this user and that nobody else can write to them.
func Dir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return Check(dir)
}

// Check checks, without creating anything, that dir and its parent belong
// to this user and that nobody else can write to them.
func Check(dir string) error {
	for _, d := range []string{dir, filepath.Dir(dir)} {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return err
		}
		if int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%s is not a directory private to this user: refusing to trust what is in %s", d, dir)
		}
	}
	return nil
}

// WriteFile writes data to dir/name, dir made private to this user
// (Dir), atomically: a temporary file in dir renamed into place, so that
// a reader never sees half of it.
func WriteFile(dir, name string, data []byte) error {
	if err := Dir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".new-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}

// RemoveAll removes path and everything below it, as os.RemoveAll does,
// but for a tree a sandboxed command wrote: it never follows a link, and
// a directory that its owner made read-only (Go's module cache, chmod
// a-w) is made writable by its owner first, so that nothing is left
// behind that the user cannot remove. It stops at depth 4096.
func RemoveAll(path string) error {
	path = filepath.Clean(path)
	parent, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer unix.Close(parent)
	err = removeAt(parent, filepath.Base(path), 0)
	if err == unix.ENOENT {
		return nil
	}
	return err
}

func removeAt(parent int, name string, depth int) error {
	err := unix.Unlinkat(parent, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	if depth > 4096 {
		return fmt.Errorf("%s: more than 4096 levels", untrusted.Quote(name)) // a name the sandbox chose
	}
	// A directory: make it ours to empty (it is the user's own: a
	// directory of another owner stays as it is, and fails below).
	unix.Fchmodat(parent, name, 0o700, 0)
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == unix.ENOENT {
		return nil // removed meanwhile (another clean-up)
	}
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(fd), name)
	var errs []error
	for {
		names, err := dir.Readdirnames(1024)
		for _, n := range names {
			if err := removeAt(fd, n, depth+1); err != nil {
				errs = append(errs, err)
			}
		}
		if err != nil || len(names) == 0 {
			break
		}
	}
	dir.Close()
	if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return errors.Join(append(errs, err)...)
	}
	return nil
}
