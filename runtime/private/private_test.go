//go:build unix

package private

import (
	"path/filepath"
	"testing"

	"srt.dev/internal/testenv"
)

func TestDir(t *testing.T) {
	parent := t.TempDir()
	testenv.Chmod(t, parent, 0o700)
	if err := Dir(filepath.Join(parent, "a")); err != nil {
		t.Errorf("a private directory: %v", err)
	}
	testenv.Chmod(t, parent, 0o777)
	if err := Dir(filepath.Join(parent, "b")); err == nil {
		t.Error("accepted a directory under a world-writable parent")
	}
	testenv.Chmod(t, parent, 0o700)
	testenv.Chmod(t, filepath.Join(parent, "a"), 0o770)
	if err := Dir(filepath.Join(parent, "a")); err == nil {
		t.Error("accepted a group-writable directory")
	}
}
