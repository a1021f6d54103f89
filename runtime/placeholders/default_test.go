//go:build linux

package placeholders

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultIgnoresTMPDIR checks that srt's state stays in its own
// directory when TMPDIR names the project (TMPDIR=$PWD).
func TestDefaultIgnoresTMPDIR(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", project)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", home)
	r, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(r.Dir, project) {
		t.Errorf("Default().Dir = %s, under TMPDIR %s", r.Dir, project)
	}
	if want := filepath.Join(home, ".cache", "srt", "placeholders"); r.Dir != want {
		t.Errorf("Default().Dir = %s, want %s", r.Dir, want)
	}
}
