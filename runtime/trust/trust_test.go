//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestTrust: a digest is trusted once recorded, only there, and only as
// a regular file in a directory private to the user; nothing but a
// digest is one; no home directory is made.
func TestTrust(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if ok, err := Trusted(digest); ok || err != nil {
		t.Fatalf("Trusted before Trust = %v, %v", ok, err)
	}
	if err := Trust(digest, "/p/plan", "test"); err != nil {
		t.Fatal(err)
	}
	if ok, err := Trusted(digest); !ok || err != nil {
		t.Fatalf("Trusted after Trust = %v, %v", ok, err)
	}
	other := strings.Replace(digest, "0", "f", 1)
	if ok, _ := Trusted(other); ok {
		t.Error("another digest is trusted")
	}
	for _, bad := range []string{"", "../x", digest[:63], strings.ToUpper(digest[:2]) + "zz" + digest[4:]} {
		if err := Trust(bad, "/p", "test"); err == nil {
			t.Errorf("Trust(%q) accepted it", bad)
		}
		if ok, _ := Trusted(bad); ok {
			t.Errorf("Trusted(%q)", bad)
		}
	}
	dir := filepath.Join(state, "srt", "trusted-plans")
	// A directory at a digest's name is not a record.
	testenv.Mkdir(t, filepath.Join(dir, other), 0o700)
	if ok, _ := Trusted(other); ok {
		t.Error("a directory counts as a record")
	}
	// A record directory others may write is not trusted.
	testenv.Chmod(t, dir, 0o777)
	if ok, err := Trusted(digest); ok || err == nil {
		t.Errorf("in a directory others may write: Trusted = %v, %v", ok, err)
	}
	testenv.Chmod(t, dir, 0o700)

	// Without XDG_STATE_HOME, under the home directory, which srt does
	// not make.
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", filepath.Join(state, "no-such-home"))
	if err := Trust(digest, "/p", "test"); err == nil {
		t.Error("Trust made a home directory")
	}
	if _, err := os.Stat(filepath.Join(state, "no-such-home")); err == nil {
		t.Error("the home directory was made")
	}
}
