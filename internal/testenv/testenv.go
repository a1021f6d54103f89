// Package testenv holds what the tests that run real sandboxes share.
package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Require returns the paths of the named programs, or skips the test when
// one is missing, unless SRT_REQUIRE_SANDBOX=1 (as in CI), where a missing
// program fails it: a sandbox test skipped in CI is not a test.
func Require(t testing.TB, programs ...string) []string {
	t.Helper()
	var paths []string
	for _, p := range programs {
		path, err := exec.LookPath(p)
		if err != nil {
			if os.Getenv("SRT_REQUIRE_SANDBOX") == "1" {
				t.Fatalf("%s not found and SRT_REQUIRE_SANDBOX=1: %v", p, err)
			}
			t.Skipf("%s not found: %v", p, err)
		}
		paths = append(paths, path)
	}
	return paths
}

// PublicCopy copies the running test binary into a new directory that any
// user can enter, so that it can be run as another user (or inside a
// sandbox that hides the build directory), and returns its path.
func PublicCopy(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "srt-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, name)
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
