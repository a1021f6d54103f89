//go:build unix

package private

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	parent := t.TempDir()
	os.Chmod(parent, 0o700)
	if err := Dir(filepath.Join(parent, "a")); err != nil {
		t.Errorf("a private directory: %v", err)
	}
	os.Chmod(parent, 0o777)
	if err := Dir(filepath.Join(parent, "b")); err == nil {
		t.Error("accepted a directory under a world-writable parent")
	}
	os.Chmod(parent, 0o700)
	os.Chmod(filepath.Join(parent, "a"), 0o770)
	if err := Dir(filepath.Join(parent, "a")); err == nil {
		t.Error("accepted a group-writable directory")
	}
}
