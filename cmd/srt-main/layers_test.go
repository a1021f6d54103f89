//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/initstep"
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

// initStep runs script as the command of srt's init step (the test
// binary in that role) under raw bubblewrap, in dir, as uid: the mounts
// are bubblewrap's options before a fresh /dev and /proc, landlock the
// init step's options of the second layer (none: no second layer). No
// resolve step and no comparison of the two layers stands between the
// mounts and the kernel, as none would before a mistake of bubblewrap's,
// the kernel's or srt's own resolver.
func initStep(t *testing.T, bin string, uid int, mounts, landlock []string, dir, script string) (string, error) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	host, child := os.NewFile(uintptr(pair[0]), "hand-off"), os.NewFile(uintptr(pair[1]), "hand-off (init step)")
	defer host.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	args := append(append([]string{"--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-user", "--cap-drop", "ALL"}, mounts...),
		"--dev", "/dev", "--proc", "/proc", "--chdir", dir, "--", bin, initstep.InitArg)
	args = append(append(args, landlock...), "--", "/bin/sh", "-c", script)
	cmd := exec.Command("bwrap", args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = []*os.File{null, child} // 3: no seccomp program; 4: the hand-off
	if uid != os.Geteuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	// The init step hands its listeners over, then waits for the go-ahead.
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(3*4))
	if _, oobn, _, _, err := unix.Recvmsg(int(host.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC); err == nil {
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				fds, _ := unix.ParseUnixRights(&m)
				for _, fd := range fds {
					unix.Close(fd)
				}
			}
		}
	}
	host.Write([]byte{1})
	err = cmd.Wait()
	return out.String(), err
}

// TestLandlockSecondLayer proves the second layer holds in the kernel on
// its own: when the mounts let a write through outside the write roots
// (the project's parent bound writable) and nothing caught it before the
// kernel (srt refuses such a plan, TestLayersDisagree; here the init step
// runs under raw bubblewrap, as a mistake no comparison of the plan can
// see would leave it), the init step's Landlock refuses the write
// (EACCES, Landlock's answer, where a read-only mount says EROFS) while
// the project and /dev/null stay writable; without the second layer's
// options the same write goes through. As root and as nobody.
func TestLandlockSecondLayer(t *testing.T) {
	requireSandbox(t)
	landlockHost(t)
	users := testUsers()
	script := `echo in > inside.txt && echo "inside ok"; ` +
		`if echo out > ../beside.txt; then echo "beside written"; fi; ` +
		`echo dev > /dev/null && echo "null ok"`
	for _, uid := range users {
		for _, keep := range []bool{false, true} {
			name := map[bool]string{false: "without landlock", true: "with landlock"}[keep]
			t.Run(name+"/uid"+strconv.Itoa(uid), func(t *testing.T) {
				root := publicDir(t)
				outer := filepath.Join(root, "outer")
				proj := filepath.Join(outer, "proj")
				testenv.MkdirAll(t, proj, 0o755)
				filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
				var landlock []string
				if keep {
					landlock = []string{initstep.LandlockArg + strings.Join(policy.LandlockScopes, ","), initstep.LandlockWriteArg + proj, initstep.LandlockWriteArg + "/dev/null"}
				}
				out, err := initStep(t, filepath.Join(binDir, "srt-init"), uid, []string{"--ro-bind", "/", "/", "--bind", outer, outer}, landlock, proj, script)
				_, statErr := os.Stat(filepath.Join(outer, "beside.txt"))
				written := statErr == nil
				if !keep {
					// The control: the mistake is real.
					if err != nil || !written || out != "inside ok\nbeside written\nnull ok\n" {
						t.Fatalf("the mistaken mounts without the second layer should let the write through: %v written=%v\n%s", err, written, out)
					}
					return
				}
				want := "inside ok\nnull ok\n"
				got := regexp.MustCompile(`(?m)^.*beside.txt: Permission denied\n`).ReplaceAllString(out, "")
				if err != nil || written || got != want || !strings.Contains(out, "Permission denied") {
					t.Errorf("with the second layer: %v, beside.txt written=%v\n%s\nwant (besides the refusal):\n%s", err, written, out, want)
				}
				if b, err := os.ReadFile(filepath.Join(proj, "inside.txt")); err != nil || string(b) != "in\n" {
					t.Errorf("inside.txt: %q %v", b, err)
				}
			})
		}
	}
}

// publicProject is srt (srtBin), and a directory root that every user
// may enter, which holds proj, an empty project.
func publicProject(t *testing.T) (bin, root, proj string) {
	t.Helper()
	bin, root = srtBin, publicDir(t)
	proj = filepath.Join(root, "proj")
	testenv.MkdirAll(t, proj, 0o755)
	return bin, root, proj
}

// srtAs runs srt (bin), as uid, in dir with HOME root (made
// the user's), and returns its exit code and combined output.
func srtAs(t *testing.T, bin string, uid int, root, dir string, args ...string) (int, string) {
	t.Helper()
	return srtIn(t, bin, uid, root, dir, "", args...)
}

// limitsBomb forks until the kernel refuses (for at most 10 s), every
// child waiting for the end of a pipe the parent closes then, and prints
// how many children were alive at once and whether a fork was refused.
const limitsBomb = `
import os, time
r, w = os.pipe()
deadline = time.time() + 10
alive, refused = 0, False
while time.time() < deadline:
    try:
        pid = os.fork()
    except OSError:
        refused = True
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    alive += 1
os.close(w)
for _ in range(alive):
    os.wait()
print("most", alive, "refused", refused, flush=True)
`

// limitsHog asks for 512 MiB, a MiB at a time, touching each.
const limitsHog = `
b = []
try:
    for i in range(512):
        b.append(bytearray(1 << 20))
    print("hog got 512 MiB", flush=True)
except MemoryError:
    print("hog refused", flush=True)
`

// TestLimits runs a fork bomb, a memory hog and a CPU spinner in sandboxes
// with limits, as root (cgroups, where this host lets srt make them below
// its own) and as nobody (rlimits): each is stopped at its limit (the bomb
// gets fewer processes than the limit), srt says which limit was reached
// where it can tell, and no cgroup is left behind.
func TestLimits(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3")
	users := testUsers()
	for _, uid := range users {
		t.Run("uid"+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			testenv.WriteFile(t, filepath.Join(proj, "bomb.py"), []byte(limitsBomb), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "hog.py"), []byte(limitsHog), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
				"limits": {"memoryMiB": 96, "processes": 40, "cpuSeconds": 60, "openFiles": 64}}`), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "cpu.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
				"limits": {"cpuSeconds": 1}}`), 0o644)
			cgroups := uid == 0 && cgroupsHere()

			// The fork bomb: it gets no more processes than the limit.
			code, out := srtAs(t, bin, uid, root, proj, "--settings", "s.json", "--violations", "-c", "python3 bomb.py")
			m := regexp.MustCompile(`most (\d+) refused True`).FindStringSubmatch(out)
			if code != 0 || m == nil {
				t.Fatalf("bomb: exit %d\n%s", code, out)
			}
			if n, _ := strconv.Atoi(m[1]); n >= 40 {
				t.Errorf("bomb: %d children alive at once, limits.processes is 40", n)
			}
			reported := strings.Contains(out, "srt: the sandbox reached limits.processes = 40: the kernel refused ") &&
				strings.Contains(out, "deny limit processes=40 (limits.processes = 40: the kernel refused ")
			if reported != cgroups {
				t.Errorf("bomb: reported=%v, want %v (a pids cgroup: %v)\n%s", reported, cgroups, cgroups, out)
			}

			// The memory hog: killed by the kernel in a memory cgroup,
			// refused by RLIMIT_DATA without one.
			code, out = srtAs(t, bin, uid, root, proj, "--settings", "s.json", "--violations", "-c", "python3 hog.py")
			if strings.Contains(out, "hog got 512 MiB") {
				t.Errorf("hog: got its memory\n%s", out)
			}
			if cgroups {
				if code != 137 || !strings.Contains(out, "srt: the sandbox reached limits.memoryMiB = 96 MiB: the kernel killed 1 process, out of memory\n") {
					t.Errorf("hog: exit %d, want 137 and the report\n%s", code, out)
				}
			} else if code != 0 || !strings.Contains(out, "hog refused") || strings.Contains(out, "limits.memoryMiB") {
				t.Errorf("hog: exit %d, want the hog refused and nothing reported (srt cannot tell)\n%s", code, out)
			}

			// Two CPU spinners: the pair reaches a second of CPU time
			// before either does (the cgroup's total), each its own
			// second later (RLIMIT_CPU).
			start := time.Now()
			code, out = srtAs(t, bin, uid, root, proj, "--settings", "cpu.json", "--violations", "-c", "sh -c 'while :; do :; done' & while :; do :; done")
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("spinner ran %v", d)
			}
			want := "srt: the sandbox reached limits.cpuSeconds = 1 s: the command used that much CPU time, and the kernel stopped it (SIGXCPU)\n"
			if cgroups {
				want = "srt: the sandbox reached limits.cpuSeconds = 1 s: the sandbox used that much CPU time, and srt stopped it\n"
			}
			if code == 0 || !strings.Contains(out, want) {
				t.Errorf("spinner: exit %d\n%s\nwant:\n%s", code, out, want)
			}
			// A warm server's next sandbox has its cgroups while it waits.
			stopWarmServers(t, root)
			if left := leftCgroups(); len(left) > 0 {
				t.Errorf("cgroups left behind: %v", left)
			}
		})
	}
}

// cgroupsHere reports whether srt can make cgroups below its own on this
// host (as root, cgroup v1 with the memory, pids and cpuacct controllers).
func cgroupsHere() bool {
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, c := range []string{"memory", "pids", "cpuacct"} {
		if !regexp.MustCompile(`(?m)^\d+:` + c + `:`).Match(b) {
			return false
		}
	}
	return true
}

// leftCgroups lists the cgroup directories of runs found on this host.
func leftCgroups() []string {
	var left []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), "srt-") {
			left = append(left, p)
			return filepath.SkipDir
		}
		return nil
	})
	return left
}

// TestLimitsKilled: srt killed by SIGKILL leaves no cgroup behind; the
// reaper removes the run's cgroups once the sandbox is gone.
func TestLimitsKilled(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 || !cgroupsHere() {
		t.Skip("srt makes cgroups here only as root on cgroup v1 (docs/layers.md)")
	}
	bin, root, proj := publicProject(t)
	testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
		"limits": {"memoryMiB": 256, "processes": 64, "cpuSeconds": 60}}`), 0o644)
	cmd := exec.Command(bin, "--settings", "s.json", "-c", "echo started; exec sleep 30")
	cmd.Dir = proj
	cmd.Env = append([]string{"HOME=" + root, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC"), "XDG_STATE_HOME=" + filepath.Join(root, "state"), "XDG_CACHE_HOME=" + filepath.Join(root, "cache")}, warmSetting()...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, _ := out.Read(buf); string(buf[:n]) != "started\n" {
		t.Fatalf("the command did not start: %q", buf[:n])
	}
	if left := leftCgroups(); len(left) != 3 {
		t.Errorf("while it runs, the run's cgroups are %v, want memory, pids and cpuacct", left)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// A warm server prepares the next sandbox, cgroups included, once
	// the killed command has ended: what is left once it has ended too
	// is the killed run's.
	stopWarmServers(t, root)
	deadline := time.Now().Add(10 * time.Second)
	for len(leftCgroups()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := leftCgroups(); len(left) > 0 {
		t.Errorf("cgroups left 10 s after srt was killed: %v", left)
	}
}
