//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// tmpScript uses the temporary directory the way tools do: mktemp,
// Python's tempfile, and go build (its work directory), with the host's
// build cache, read-only in the sandbox.
const tmpScript = `set -e
echo "TMPDIR=$TMPDIR"
f=$(mktemp); echo x > "$f"; echo "mktemp $(dirname "$f")"
python3 -c 'import os, tempfile; fd, p = tempfile.mkstemp(); os.write(fd, b"x"); print("mkstemp", os.path.dirname(p))'
mkdir "$TMPDIR/m"; cd "$TMPDIR/m"
printf 'module example.com/m\n\ngo 1.21\n' > go.mod
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("built") }\n' > main.go
go build -o m . && ./m
`

const tmpWant = "TMPDIR=/tmp/claude\nmktemp /tmp/claude\nmkstemp /tmp/claude\nbuilt\n"

// tmpEnv is the environment of srt for these tests: its own registry,
// its own host temporary directory, and go on PATH with the host's cache.
func tmpEnv(t *testing.T, home, hostTmp string) []string {
	t.Helper()
	goBin := testenv.Require(t, "go")[0]
	// The user's cache, not the one TestMain gives srt's policy cache.
	goEnv := exec.Command(goBin, "env", "GOCACHE")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			goEnv.Env = append(goEnv.Env, kv)
		}
	}
	cache, err := goEnv.Output()
	if err != nil {
		t.Fatal(err)
	}
	// The build writes its cache, read-only in the sandbox (go build goes
	// on without it): the refusal lines that say so are not this test's.
	return append(warmSetting(),
		"SRT_REFUSALS=never", "HOME="+home, "TMPDIR="+hostTmp, "SRTC="+os.Getenv("SRTC"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, ".run"),
		"PATH="+filepath.Dir(goBin)+":"+os.Getenv("PATH"),
		"GOCACHE="+strings.TrimSpace(string(cache)),
	)
}

// runsLeft lists the runs' temporary directories srt left on the host:
// what the directory holds, but a warm server's socket and its lock,
// which are there as long as the server is. A test looks once its
// servers have ended (stopWarmServers): the sandbox a server prepared
// has a temporary directory there too.
func runsLeft(hostTmp string, uid int) []string {
	entries, _ := os.ReadDir(filepath.Join(hostTmp, "srt-"+strconv.Itoa(uid), "tmp"))
	var names []string
	for _, e := range entries {
		if warmRuns && strings.HasPrefix(e.Name(), "warm-") {
			continue
		}
		names = append(names, e.Name())
	}
	return names
}

func listing(dir string) string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestTmpDir: with the built-in defaults, the command has a writable
// TMPDIR that mktemp, Python's tempfile and go build use; it is removed
// when the run ends.
func TestTmpDir(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	hostTmp := testDir(t)
	cmd := exec.Command(srtBin, "-c", tmpScript)
	cmd.Dir = dir
	cmd.Env = tmpEnv(t, dir, hostTmp)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	before := listing("/tmp/claude")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != tmpWant {
		t.Errorf("%v\n%s\nwant:\n%s", err, out, tmpWant)
	}
	if after := listing("/tmp/claude"); after != before {
		t.Errorf("the host's /tmp/claude changed: %q, was %q", after, before)
	}
	stopWarmServers(t, dir)
	if left := runsLeft(hostTmp, 0); len(left) != 0 {
		t.Errorf("temporary directories left after the run: %v", left)
	}
}

// TestTmpDirAsNobody: the same for an unprivileged user.
func TestTmpDirAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody; as a user TestTmpDir already runs unprivileged")
	}
	root := publicDir(t)
	home := filepath.Join(root, "home")
	hostTmp := filepath.Join(root, "tmp")
	for _, d := range []string{filepath.Join(home, ".run"), hostTmp} {
		testenv.MkdirAll(t, d, 0o700)
		testenv.Chown(t, d, 65534, 65534)
	}
	testenv.Chown(t, home, 65534, 65534)
	cmd := exec.Command(srtBin, "-c", tmpScript)
	cmd.Dir = home
	// Root's build cache, which nobody cannot reach under /root, linked
	// where it can (the sandbox reads it; compiling the standard library
	// afresh would take a minute).
	env := tmpEnv(t, home, hostTmp)
	cache := filepath.Join(home, "gocache")
	if out, err := exec.Command("cp", "-al", strings.TrimPrefix(env[len(env)-1], "GOCACHE="), cache).CombinedOutput(); err != nil {
		t.Fatalf("linking the build cache: %v %s", err, out)
	}
	env[len(env)-1] = "GOCACHE=" + cache
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != tmpWant {
		t.Errorf("as nobody: %v\n%s\nwant:\n%s", err, out, tmpWant)
	}
	stopWarmServers(t, home)
	if left := runsLeft(hostTmp, 65534); len(left) != 0 {
		t.Errorf("temporary directories left after the run: %v", left)
	}
}

// TestTmpDirPrivate: two runs at the same time each see only their own
// temporary files, and neither sees the host's /tmp/claude.
func TestTmpDirPrivate(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	hostTmp := testDir(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	// What the host has in /tmp/claude stays out of sight.
	testenv.MkdirAll(t, "/tmp/claude", 0o755)
	testenv.WriteFile(t, "/tmp/claude/host-file", nil, 0o644)
	defer os.Remove("/tmp/claude/host-file")
	start := func(name string) (*exec.Cmd, *bufio.Reader, func()) {
		cmd := exec.Command(srtBin, "-c", `touch "$TMPDIR/`+name+`"; echo ready; read _; ls -A "$TMPDIR"; find /tmp -name 'mark-*' 2>/dev/null || true`)
		cmd.Dir = dir
		cmd.Env = tmpEnv(t, dir, hostTmp)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(out)
		if line, _ := r.ReadString('\n'); line != "ready\n" {
			t.Fatalf("%s: %q", name, line)
		}
		return cmd, r, func() { in.Close() }
	}
	a, aOut, aGo := start("mark-a")
	b, bOut, bGo := start("mark-b")
	for _, run := range []struct {
		cmd  *exec.Cmd
		out  *bufio.Reader
		goOn func()
		want string
	}{{a, aOut, aGo, "mark-a\n/tmp/claude/mark-a\n"}, {b, bOut, bGo, "mark-b\n/tmp/claude/mark-b\n"}} {
		run.goOn()
		rest := new(strings.Builder)
		bufio.NewReader(run.out).WriteTo(rest)
		run.cmd.Wait()
		if rest.String() != run.want {
			t.Errorf("a run sees:\n%s\nwant:\n%s", rest, run.want)
		}
	}
	stopWarmServers(t, dir)
	if left := runsLeft(hostTmp, 0); len(left) != 0 {
		t.Errorf("temporary directories left after the runs: %v", left)
	}
}

// TestTmpDirKilled: when srt is killed with SIGKILL, its run's temporary
// directory is removed by the reaper, without another run.
func TestTmpDirKilled(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	hostTmp := testDir(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	cmd := exec.Command(srtBin, "-c", `echo data > "$TMPDIR/f"; echo ready; sleep 30`)
	cmd.Dir = dir
	cmd.Env = tmpEnv(t, dir, hostTmp)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("%q", line)
	}
	if left := runsLeft(hostTmp, 0); len(left) != 1 {
		t.Fatalf("while the run lives: %v, want its one directory", left)
	}
	cmd.Process.Kill()
	cmd.Wait()
	stopWarmServers(t, dir) // with the next sandbox it prepared
	deadline := time.Now().Add(5 * time.Second)
	for len(runsLeft(hostTmp, 0)) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := runsLeft(hostTmp, 0); len(left) != 0 {
		t.Errorf("left after SIGKILL of srt: %v", left)
	}
}
