// Package testenv holds what the tests that run real sandboxes share, and
// the file system calls of a test's setup that fail the test when they
// fail.
package testenv

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Require returns the paths of the named programs, or skips the test when
// one is missing, or under go test -short (a live test: -short runs only
// the tests that need no sandbox, no network peer and no tool), saying so and how to install it, unless
// SRT_REQUIRE_SANDBOX=1 (as in CI), where a missing program fails it with
// the install command: a sandbox test skipped in CI is not a test.
func Require(t testing.TB, programs ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skipf("a live test (it needs %s): go test -short skips it", strings.Join(programs, ", "))
	}
	var paths []string
	for _, p := range programs {
		path, err := exec.LookPath(p)
		if err != nil {
			Missing(t, p, Install(p))
			return nil
		}
		paths = append(paths, path)
	}
	return paths
}

// Missing fails the test when SRT_REQUIRE_SANDBOX=1, and otherwise skips
// it, saying that what is not found and the command that installs it.
func Missing(t testing.TB, what, install string) {
	t.Helper()
	if os.Getenv("SRT_REQUIRE_SANDBOX") == "1" {
		t.Fatalf("%s not found, and SRT_REQUIRE_SANDBOX=1 makes that a failure: install it (%s)", what, install)
	} else {
		t.Skipf("skipped: %s not found (install it: %s; with SRT_REQUIRE_SANDBOX=1 this is a failure)", what, install)
	}
}

// packages are the Debian and Ubuntu packages of the programs the tests
// drive (.ci/run installs them).
var packages = map[string]string{
	"bwrap": "bubblewrap", "curl": "curl", "git": "git", "node": "nodejs", "npm": "npm",
	"python3": "python3", "tinyproxy": "tinyproxy", "unshare": "util-linux", "script": "util-linux",
	"stty": "coreutils", "bash": "bash", "openssl": "openssl",
}

// Install is the command that installs program on Debian or Ubuntu.
func Install(program string) string {
	switch program {
	case "go":
		return "Go 1.26 from https://go.dev/dl/, on PATH"
	}
	pkg := packages[program]
	if pkg == "" {
		pkg = program
	}
	return "apt-get install -y " + pkg
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

// RunBwrap runs bubblewrap with args (which end in the command), the
// seccomp program prog readable on descriptor 3 as the resolved plan
// expects, the files extra on descriptors 4 and up, PATH only in the
// environment, as uid (0: the caller), and returns its standard output;
// any failure fails the test.
func RunBwrap(t testing.TB, bwrap string, args []string, prog []byte, uid int, extra ...*os.File) []byte {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	wr.Write(prog)
	wr.Close()
	defer rd.Close()
	cmd := exec.Command(bwrap, args...)
	cmd.ExtraFiles = append([]*os.File{rd}, extra...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if uid != 0 {
		asUser(cmd, uid)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwrap: %v\n%s\nargs:\n%s", err, stderr.String(), strings.Join(args, "\n"))
	}
	return out
}
