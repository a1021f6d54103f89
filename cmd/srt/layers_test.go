//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/emit/artifact"
	"srt.dev/internal/testenv"
)

// landlockHost skips (or, with SRT_REQUIRE_SANDBOX=1, fails) a test that
// needs Landlock when the kernel has none.
func landlockHost(t *testing.T) {
	t.Helper()
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); errno != 0 {
		if os.Getenv("SRT_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("this kernel has no Landlock (%v) and SRT_REQUIRE_SANDBOX=1", errno)
		}
		t.Skipf("this kernel has no Landlock: %v", errno)
	}
}

// weakenedPlan writes the plan of settings in dir with one mistake in its
// mount table: below "--ro-bind / /", a bind of high writable (one level
// above the write root). With keepLandlock false the @landlock line goes
// too (the control: the mistake then lets writes through).
func weakenedPlan(t *testing.T, dir, settings, high string, keepLandlock bool) string {
	t.Helper()
	plan := writePlan(t, dir, settings, artifact.Options{})
	b, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	bound := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "@landlock") && !keepLandlock {
			continue
		}
		out = append(out, l)
		if l == "--ro-bind / /" {
			out = append(out, "--bind "+high+" "+high)
			bound = true
		}
	}
	if !bound {
		t.Fatalf("no --ro-bind / / line in\n%s", b)
	}
	editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(out, "\n")))
	return plan
}

// TestLandlockSecondLayer proves Landlock is a second layer: a plan whose
// mount table binds the parent of the write root writable lets the command
// write beside the project without @landlock, and with it the write is
// refused (EACCES, Landlock's answer, where a read-only mount says EROFS)
// while the project stays writable. As root and as nobody.
func TestLandlockSecondLayer(t *testing.T) {
	requireSandbox(t)
	landlockHost(t)
	users := []int{os.Geteuid()}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	script := `echo in > inside.txt && echo "inside ok"; ` +
		`if echo out > ../beside.txt; then echo "beside written"; fi; ` +
		`echo dev > /dev/null && echo "null ok"; ` +
		`mkdir -p "$TMPDIR/d" && echo t > "$TMPDIR/d/f" && echo "tmp ok"`
	for _, uid := range users {
		for _, keep := range []bool{false, true} {
			name := map[bool]string{false: "without landlock", true: "with landlock"}[keep]
			t.Run(name+"/uid"+strconv.Itoa(uid), func(t *testing.T) {
				bin := testenv.PublicCopy(t, "srt")
				root := filepath.Dir(bin)
				outer := filepath.Join(root, "outer")
				proj := filepath.Join(outer, "proj")
				os.MkdirAll(proj, 0o755)
				settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
				plan := weakenedPlan(t, root, settings, outer, keep)
				filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
				cmd := exec.Command(bin, "run", "--plan", plan, "-c", script)
				cmd.Dir = proj
				cmd.Env = []string{"SRT_TEST_CLI=1", "HOME=" + root, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "XDG_STATE_HOME=" + filepath.Join(root, "state"), "XDG_CACHE_HOME=" + filepath.Join(root, "cache")}
				if uid != os.Geteuid() {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
				}
				out, err := cmd.CombinedOutput()
				_, statErr := os.Stat(filepath.Join(outer, "beside.txt"))
				written := statErr == nil
				if !keep {
					// The control: the mistake is real.
					if err != nil || !written || !strings.Contains(string(out), "beside written") {
						t.Fatalf("the weakened plan without @landlock should let the write through: %v written=%v\n%s", err, written, out)
					}
					return
				}
				want := "inside ok\nnull ok\ntmp ok\n"
				got := regexp.MustCompile(`(?m)^.*beside.txt: Permission denied\n`).ReplaceAllString(string(out), "")
				if err != nil || written || got != want || !strings.Contains(string(out), "Permission denied") {
					t.Errorf("with @landlock: %v, beside.txt written=%v\n%s\nwant (besides the refusal):\n%s", err, written, out, want)
				}
				if b, err := os.ReadFile(filepath.Join(proj, "inside.txt")); err != nil || string(b) != "in\n" {
					t.Errorf("inside.txt: %q %v", b, err)
				}
			})
		}
	}
}
