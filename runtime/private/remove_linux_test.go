//go:build linux

package private

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"srt.dev/internal/testenv"
)

// TestRemoveAll: a tree with read-only directories (as Go's module cache
// leaves them) and links out of it is removed whole, and nothing the
// links point at is touched. As root and as nobody, whom the modes stop.
func TestRemoveAll(t *testing.T) {
	if os.Geteuid() == 0 && os.Getenv("SRT_PRIVATE_AS_NOBODY") == "" {
		bin := testenv.PublicCopy(t, "private.test")
		cmd := exec.Command(bin, "-test.run", "^TestRemoveAll$", "-test.v")
		cmd.Dir = filepath.Dir(bin)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "SRT_PRIVATE_AS_NOBODY=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("as nobody: %v\n%s", err, b)
		}
	}
	base, err := os.MkdirTemp("", "srt-remove-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	outside := filepath.Join(base, "outside")
	testenv.MkdirAll(t, filepath.Join(outside, "d"), 0o755)
	testenv.WriteFile(t, filepath.Join(outside, "d", "f"), []byte("keep"), 0o644)
	tree := filepath.Join(base, "tmp")
	mod := filepath.Join(tree, "gopath/pkg/mod/example.com/m@v1.0.0")
	testenv.MkdirAll(t, filepath.Join(mod, "sub"), 0o755)
	testenv.WriteFile(t, filepath.Join(mod, "sub", "x.go"), []byte("package x"), 0o444)
	testenv.Symlink(t, outside, filepath.Join(tree, "link"))
	testenv.Symlink(t, filepath.Join(outside, "d", "f"), filepath.Join(mod, "linkf"))
	for _, d := range []string{filepath.Join(mod, "sub"), mod, filepath.Dir(mod)} {
		testenv.Chmod(t, d, 0o555)
	}
	if err := RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); err == nil {
		t.Fatal("the tree is still there")
	}
	if b, err := os.ReadFile(filepath.Join(outside, "d", "f")); err != nil || string(b) != "keep" {
		t.Fatalf("outside: %q, %v", b, err)
	}
	if err := RemoveAll(tree); err != nil {
		t.Fatalf("removing what is gone: %v", err)
	}
}
