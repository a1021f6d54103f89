//go:build linux

package quarantine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMoveErrorQuoted: a finding that cannot be moved (its directory
// replaced by a link since the check) is named in the error srt prints,
// and so is the step on the way it could not take; both are names the
// command chose, and neither reaches the error raw.
func TestMoveErrorQuoted(t *testing.T) {
	root := t.TempDir()
	dir := "x\x1b[2K\rsrt: all clear\n"
	_, found, _ := run(t, Spec{Roots: []string{root}}, func() {
		write(t, filepath.Join(root, dir, ".bashrc"), "evil")
	})
	if len(found) != 1 {
		t.Fatalf("found %v", found)
	}
	if err := os.Rename(filepath.Join(root, dir), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "moved", filepath.Join(root, dir))
	store, err := Open(filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	items, _, err := store.Move(found, time.Time{})
	if len(items) != 0 || err == nil {
		t.Fatalf("Move through a link: %v, %v", items, err)
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\r\n") || !strings.Contains(msg, `"x\x1b[2K\rsrt: all clear\n": `) {
		t.Errorf("Move's error is %q", msg)
	}
}
