//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"srt.dev/cmd/internal/warmwire"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// warmEnv is the environment of a test's warm runs: SRT_WARM on, its own
// runtime and state directories, and a server that ends 3 s after its
// last command. The test's end stops its servers (stopWarmServers).
func warmEnv(t *testing.T, dir string) []string {
	t.Helper()
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	t.Cleanup(func() { stopWarmServers(t, dir) })
	return []string{"SRT_WARM=on", "SRT_WARM_IDLE=3", "XDG_RUNTIME_DIR=" + filepath.Join(dir, ".run"), "XDG_STATE_HOME=" + filepath.Join(dir, ".run", "state")}
}

// TestWarmStart: with SRT_WARM=on, srt's commands run in sandboxes the
// warm server prepared, the first command included, with their standard
// streams, environment and exit status; a changed settings file is in
// force from the next command on.
func TestWarmStart(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := filepath.Join(dir, "s.json")
	write := func(denyRead string) {
		testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [`+denyRead+`], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	}
	write("")
	env := append(warmEnv(t, dir), "WARM_VALUE=from-the-caller")
	script := `read line; echo "$line $WARM_VALUE $(cat secret.env 2>/dev/null || echo hidden)"; echo to-stderr >&2; exit 4`
	for i := range 3 {
		code, stdout, stderr := runSrt(t, srtCmd(t, dir, env, "--debug", "--settings", settings, "-c", script), "in\n")
		if code != 4 || stdout != "in from-the-caller s3cret\n" || !strings.Contains(stderr, "to-stderr\n") {
			t.Fatalf("run %d: exit %d, stdout %q, stderr:\n%s", i+1, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "warm start: the warm server ran the command") || !strings.Contains(stderr, "warm start: the command runs in the prepared sandbox") {
			t.Errorf("run %d did not run in a prepared sandbox of the warm server:\n%s", i+1, stderr)
		}
	}
	if n := len(warmServers(dir)); n != 1 {
		t.Errorf("%d warm servers work in the project, want 1", n)
	}
	// The server's command line, which ps shows to every user, holds
	// srt's options and none of the command that started it.
	for _, pid := range warmServers(dir) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		if len(args) < 4 || !slices.Equal(args[3:], []string{"--", "--debug", "--settings", settings}) {
			t.Errorf("the warm server's command line: %q, want srt's options after the socket", args)
		}
	}
	// The settings change: the next command runs under the new ones.
	write(`"secret.env"`)
	code, stdout, stderr := runSrt(t, srtCmd(t, dir, env, "--debug", "--settings", settings, "-c", script), "in\n")
	if code != 4 || stdout != "in from-the-caller hidden\n" {
		t.Errorf("after the settings changed: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "the prepared sandbox is not used: the policy is not the one it was prepared with") {
		t.Errorf("the sandbox prepared for the old settings was not refused:\n%s", stderr)
	}
	// Another environment is another server's.
	code, stdout, _ = runSrt(t, srtCmd(t, dir, append(env, "OTHER=1"), "--settings", settings, "-c", "echo $OTHER"), "")
	if code != 0 || stdout != "1\n" {
		t.Errorf("another environment: exit %d, stdout %q", code, stdout)
	}
	if n := len(warmServers(dir)); n != 2 {
		t.Errorf("%d warm servers work in the project, want 2 (one per environment)", n)
	}
}

// TestWarmNotPrepared: settings whose sandbox cannot be prepared ahead
// (TLS termination: each run makes its own trust bundle) run in the warm
// server all the same, which says why under --debug.
func TestWarmNotPrepared(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := filepath.Join(dir, "t.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": ["localhost"], "deniedDomains": [], "tlsTerminate": {}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	code, stdout, stderr := runSrt(t, srtCmd(t, dir, warmEnv(t, dir), "--debug", "--settings", settings, "-c", "echo ok"), "")
	if code != 0 || stdout != "ok\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"warm start: no sandbox was prepared for this command: the settings terminate TLS", "warm start: the warm server ran the command"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestWarmMainReplaced: a warm server whose srt-main was replaced since
// it started (by a file of the same size and time: srt names the same
// server) tells srt to run the command itself, and ends: the command runs
// once, with its status, under the new srt-main.
func TestWarmMainReplaced(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	bin := t.TempDir() // a copy of srt's programs this test may replace
	for _, name := range []string{"srt", "srt-main", "srt-init"} {
		data, err := os.ReadFile(filepath.Join(binDir, name))
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, filepath.Join(bin, name), data, 0o755)
	}
	env := warmEnv(t, dir)
	settings := filepath.Join(dir, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	run := func(script string) (int, string, string) {
		cmd := srtCmd(t, dir, env, "--debug", "--settings", settings, "-c", script)
		cmd.Path = filepath.Join(bin, "srt")
		return runSrt(t, cmd, "")
	}
	if code, _, stderr := run("true"); code != 0 || !strings.Contains(stderr, "warm start: the warm server ran the command") {
		t.Fatalf("the first command: exit %d, stderr:\n%s", code, stderr)
	}
	// Replaced as cp -p and mv would: another file, of the same size and
	// time (so srt names the same server).
	main := filepath.Join(bin, "srt-main")
	fi, err := os.Stat(main)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, main+".new", data, 0o755)
	if err := os.Chtimes(main+".new", fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(main+".new", main); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("echo once >> ran; cat ran; exit 5")
	if code != 5 || stdout != "once\n" {
		t.Errorf("after srt-main was replaced: exit %d, stdout %q (want 5, %q), stderr:\n%s", code, stdout, "once\n", stderr)
	}
	if want := "srt-main was replaced since the warm server started"; !strings.Contains(stderr, want) {
		t.Errorf("--debug does not say %q:\n%s", want, stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(warmServers(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pids := warmServers(dir); len(pids) > 0 {
		t.Errorf("the warm server of the replaced srt-main still runs: %v", pids)
	}
}

// TestWarmOnlyRuns: with SRT_WARM=on, what is not a command to run in
// the sandbox (--version, --help, srt doctor, a wrong command line) is
// srt-main's to answer, and starts no warm server.
func TestWarmOnlyRuns(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	env := warmEnv(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--version"}, 0, "srt "},
		{[]string{"--help"}, 0, "Usage: srt"},
		{[]string{"run", "--help"}, 0, "Usage: srt run"},
		{[]string{"--bogus", "true"}, 1, "unknown option --bogus"},
		{[]string{"--debug"}, 1, "No command specified"},
	} {
		code, stdout, stderr := runSrt(t, srtCmd(t, dir, env, tc.args...), "")
		if code != tc.code || !strings.Contains(stdout+stderr, tc.out) {
			t.Errorf("srt %q: exit %d, output %q %q; want %d and %q", tc.args, code, stdout, stderr, tc.code, tc.out)
		}
	}
	if pids := warmServers(dir); len(pids) > 0 {
		t.Errorf("warm servers started for commands they do not run: %v", pids)
	}
	code, _, stderr := runSrt(t, srtCmd(t, dir, append(env, "SRT_WARM=yes"), "-c", "true"), "")
	if code != 1 || !strings.Contains(stderr, `SRT_WARM must be on or off, not "yes"`) {
		t.Errorf("SRT_WARM=yes: exit %d, stderr %q", code, stderr)
	}
}

// TestWarmSignals: the client relays its signals to the command, and a
// client killed with SIGKILL takes its command with it.
func TestWarmSignals(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	env := warmEnv(t, dir)
	start := func(script string) (*exec.Cmd, *bufio.Reader) {
		cmd := srtCmd(t, dir, env, "-c", script)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(out)
		if line, err := r.ReadString('\n'); line != "up\n" {
			t.Fatalf("%q %v", line, err)
		}
		return cmd, r
	}
	cmd, out := start(`trap 'echo term; exit 3' TERM; echo up; while :; do sleep 0.05; done`)
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := out.ReadString(0)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 || rest != "term\n" {
		t.Errorf("SIGTERM to the client: exit %d, output %q; want 3 and the command's trap", code, rest)
	}
	marker := "27.1828"
	cmd, _ = start(`echo up; sleep ` + marker)
	cmd.Process.Kill()
	cmd.Wait()
	if left := waitGone("sleep " + marker); left != "" {
		t.Fatalf("the command outlived its client, killed with SIGKILL: %s", left)
	}
}

// TestWarmServerUnreachable: a sandbox sees no warm server's socket, and
// a process in other namespaces (as a sandbox's are) that connects all
// the same is refused: nothing runs.
func TestWarmServerUnreachable(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "unshare", "python3")
	dir := project(t)
	env := warmEnv(t, dir)
	settings := filepath.Join(dir, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	if code, _, stderr := runSrt(t, srtCmd(t, dir, env, "--settings", settings, "-c", "true"), ""); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sock := serverSocket(t, dir)
	tmp := filepath.Dir(sock)
	code, stdout, stderr := runSrt(t, srtCmd(t, dir, env, "--settings", settings, "-c", "ls -A "+tmp+"; echo listed"), "")
	if code != 0 || stdout != "listed\n" {
		t.Errorf("the sandbox sees %s: exit %d, %q %s", tmp, code, stdout, stderr)
	}
	// A request as the client sends it is served from this process's
	// namespaces (the control), and refused from another user namespace,
	// as root of it, before anything runs.
	send := func(unshare bool, marker string) string {
		req, _ := json.Marshal(warmwire.Request{Args: []string{"--settings", settings, "-c", "touch " + marker}, Cwd: dir, Env: srtCmd(t, dir, env).Environ()})
		py := `
import socket, sys, array
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
try:
    s.sendmsg([sys.argv[2].encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]).tobytes())])
    print("reply:", s.recv(4096).decode())
except OSError as e:
    print("refused:", e)
`
		argv := []string{"python3", "-c", py, sock, string(req)}
		if unshare {
			argv = append([]string{"unshare", "--user", "--map-root-user"}, argv...)
		}
		out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	control := filepath.Join(dir, "control")
	if out := send(false, control); !strings.HasSuffix(out, `reply: {"code":0}`) {
		t.Fatalf("the control request: %s", out)
	}
	if _, err := os.Stat(control); err != nil {
		t.Fatalf("the control request ran nothing: %v", err)
	}
	marker := filepath.Join(dir, "ran")
	if out := send(true, marker); strings.Contains(out, "code") {
		t.Errorf("a peer in another user namespace got an answer: %s", out)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the warm server ran a command sent from another user namespace")
	}
}

// serverSocket is the socket of the one warm server working in dir.
func serverSocket(t *testing.T, dir string) string {
	t.Helper()
	pids := warmServers(dir)
	if len(pids) != 1 {
		t.Fatalf("warm servers in %s: %v, want one", dir, pids)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/cmdline")
	args := strings.Split(string(cmdline), "\x00")
	if len(args) < 3 || args[1] != warmwire.Arg {
		t.Fatalf("a warm server's command line: %q", args)
	}
	return args[2]
}

// TestWarmIdle: the warm server ends once idle for SRT_WARM_IDLE, and
// leaves neither its socket nor a sandbox behind.
func TestWarmIdle(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	env := append(warmEnv(t, dir), "SRT_WARM_IDLE=1")
	if code, _, stderr := runSrt(t, srtCmd(t, dir, env, "-c", "true"), ""); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sock := serverSocket(t, dir)
	deadline := time.Now().Add(10 * time.Second)
	for len(warmServers(dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the warm server still runs 10 s after its last command, with SRT_WARM_IDLE=1")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its prepared sandbox went with it: no bubblewrap works in dir.
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		exe, _ := os.Readlink("/proc/" + e.Name() + "/exe")
		if cwd == dir && strings.HasSuffix(exe, "bwrap") {
			t.Errorf("bubblewrap (pid %s) outlived the warm server", e.Name())
		}
	}
	for _, f := range []string{sock, sock + ".lock"} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("the warm server left %s: %v", f, err)
		}
	}
}

// waitPrepared waits until the warm server working in dir has the next
// sandbox started: its bubblewrap's child runs the init step, which then
// waits for its command.
func waitPrepared(t *testing.T, dir string) {
	t.Helper()
	// The children of each of pid's threads.
	children := func(pid int) []int {
		var out []int
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			for _, f := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, n)
				}
			}
		}
		return out
	}
	comm := func(pid int) string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return strings.TrimSpace(string(b))
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, server := range warmServers(dir) {
			for _, c := range children(server) {
				if comm(c) != "bwrap" {
					continue
				}
				for _, init := range children(c) {
					if comm(init) != "bwrap" {
						// The hand-over follows the init step's start.
						time.Sleep(500 * time.Millisecond)
						return
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the warm server prepared no sandbox within 20 s")
}

// TestWarmSeesChanges: a repository made in the project after the warm
// server prepared the next sandbox is protected in the command's run:
// the plan resolved again finds it, and the prepared sandbox, which does
// not protect it, is not used.
func TestWarmSeesChanges(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := filepath.Join(dir, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	env := warmEnv(t, dir)
	if code, _, stderr := runSrt(t, srtCmd(t, dir, env, "--debug", "--settings", settings, "-c", "true"), ""); code != 0 {
		t.Fatalf("first command: exit %d\n%s", code, stderr)
	}
	// A repository made before the sandbox's resolution is protected by
	// the sandbox itself: the test tries again with another until one is
	// made after it (a loaded machine may prepare slowly).
	changed := false
	for i := 1; i <= 3 && !changed; i++ {
		waitPrepared(t, dir)
		repo := "repo" + strconv.Itoa(i)
		testenv.MkdirAll(t, filepath.Join(dir, repo, ".git", "hooks"), 0o755)
		hook := repo + "/.git/hooks/pre-commit"
		code, stdout, stderr := runSrt(t, srtCmd(t, dir, env, "--debug", "--settings", settings, "-c", `(echo planted > `+hook+`) 2>/dev/null && echo wrote || echo refused`), "")
		if code != 0 || stdout != "refused\n" {
			t.Errorf("writing a hook of a repository made after the sandbox was prepared: exit %d, stdout %q\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "warm start: the warm server ran the command") {
			t.Errorf("the warm server did not run the command:\n%s", stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, hook)); err == nil {
			t.Error("the hook was written on the host")
		}
		changed = strings.Contains(stderr, "warm start: the prepared sandbox is not used: the host changed since it was prepared")
		if !changed {
			t.Logf("try %d: the repository was made before the sandbox was prepared:\n%s", i, stderr)
		}
	}
	if !changed {
		t.Error("the warm server never refused its prepared sandbox because the host changed")
	}
}
