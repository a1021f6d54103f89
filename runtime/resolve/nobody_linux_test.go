//go:build linux

package resolve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"srt.dev/internal/testenv"
)

// asNobody runs one test of this binary again as the user nobody, from a
// copy of the binary that nobody can execute.
func asNobody(t *testing.T, test string) {
	t.Helper()
	bin := testenv.PublicCopy(t, "resolve.test")
	dir := filepath.Dir(bin)
	cmd := exec.Command(bin, "-test.run", "^"+test+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", test, err, b)
	}
	t.Logf("%s as nobody:\n%s", test, b)
}

// TestResolveStandIn: a deny that cannot be inspected hides its nearest
// inspectable ancestor instead of nothing.
func TestResolveStandIn(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root inspects every path: run this test again as nobody.
		asNobody(t, "TestResolveStandIn")
		return
	}
	home, cwd := project(t)
	locked := filepath.Join(home, "locked")
	testenv.MkdirAll(t, filepath.Join(locked, "inner"), 0o755)
	testenv.Chmod(t, locked, 0)
	defer os.Chmod(locked, 0o755)
	res := resolveFor(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/locked/inner/secret"], "allowWrite": [], "denyWrite": []}}`, home, cwd)
	if args := strings.Join(res.Args, " "); !strings.Contains(args, "--tmpfs "+locked+" ") && !strings.Contains(args, "--tmpfs "+home+" ") {
		t.Errorf("no stand-in:\n%s\nnotes: %v", strings.Join(res.Args, "\n"), res.Notes)
	}
}
