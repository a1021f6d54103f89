package testenv

import (
	"os"
	"testing"
)

// The file system calls of a test's setup: each fails the test, naming the
// call and the path, when the call fails, so that a test never goes on
// from a setup it did not get.

// WriteFile is os.WriteFile.
func WriteFile(t testing.TB, name string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, data, perm); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// MkdirAll is os.MkdirAll.
func MkdirAll(t testing.TB, path string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, perm); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Mkdir is os.Mkdir.
func Mkdir(t testing.TB, name string, perm os.FileMode) {
	t.Helper()
	if err := os.Mkdir(name, perm); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Symlink is os.Symlink.
func Symlink(t testing.TB, oldname, newname string) {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Link is os.Link.
func Link(t testing.TB, oldname, newname string) {
	t.Helper()
	if err := os.Link(oldname, newname); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Chmod is os.Chmod.
func Chmod(t testing.TB, name string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(name, mode); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Chown is os.Chown.
func Chown(t testing.TB, name string, uid, gid int) {
	t.Helper()
	if err := os.Chown(name, uid, gid); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Lchown is os.Lchown.
func Lchown(t testing.TB, name string, uid, gid int) {
	t.Helper()
	if err := os.Lchown(name, uid, gid); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Remove is os.Remove.
func Remove(t testing.TB, name string) {
	t.Helper()
	if err := os.Remove(name); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// RemoveAll is os.RemoveAll.
func RemoveAll(t testing.TB, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Rename is os.Rename.
func Rename(t testing.TB, oldpath, newpath string) {
	t.Helper()
	if err := os.Rename(oldpath, newpath); err != nil {
		t.Fatalf("setup: %v", err)
	}
}
