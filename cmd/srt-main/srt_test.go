//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"srt.dev/cmd/internal/warmwire"
	"srt.dev/compiler"
	"srt.dev/emit/artifact"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
	"srt.dev/schema"
)

// binDir holds srt, srt-main, srt-init and srtc as the README installs them
// (CGO_ENABLED=0), built once by TestMain where every user may read and
// run them: srt finds srt-init and srtc beside it. srtBin is srt's path.
var binDir, srtBin string

// TestMain builds the binaries every test runs (binDir), and gives srt's
// policy cache and state directories of their own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "srt-test-bin-")
	if err != nil {
		panic(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "srt.dev/cmd/srt", "srt.dev/cmd/srt-main", "srt.dev/cmd/srt-init", "srt.dev/cmd/srtc")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README installs them
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building srt, srt-main, srt-init and srtc: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir, srtBin = dir, filepath.Join(dir, "srt")
	os.Setenv("SRTC", filepath.Join(dir, "srtc"))
	// The go commands the tests run (the recipes, the example decider)
	// keep the build cache the user has, which XDG_CACHE_HOME below would
	// move.
	if gocache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && os.Getenv("GOCACHE") == "" {
		os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	}
	cache, err := os.MkdirTemp("", "srt-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	os.Setenv("XDG_STATE_HOME", cache)
	if os.Getenv("SRT_WARM") != "" && os.Getenv("SRT_WARM_IDLE") == "" {
		os.Setenv("SRT_WARM_IDLE", "5") // see warmSetting
	}
	code := m.Run()
	// Each test ends the warm servers of its directories (testDir): one
	// still running here outlived its test.
	if left := findWarmServers(func(_, prog string) bool { return strings.HasPrefix(prog, dir+string(filepath.Separator)) }); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "warm servers outlived their tests: %v\n", left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		code = 1
	}
	os.RemoveAll(dir)
	os.RemoveAll(cache)
	os.Exit(code)
}

func requireSandbox(t *testing.T) { testenv.Require(t, "bwrap", "curl") }

// The tests run srt cold, or warm when go test runs with SRT_WARM=on
// (test.sh runs the suite both ways): srt started with this process's
// environment is then warm too, and a test that builds srt's environment
// from scratch adds warmSetting to it. Either way, the servers of a test
// end before the test checks or removes its directories (testDir,
// publicDir, project, stopWarmServers).

// warmRuns reports whether the tests run srt warm.
var warmRuns = os.Getenv("SRT_WARM") == "on"

// warmSetting is the part of srt's environment that says whether it runs
// warm: SRT_WARM as go test has it, with servers that end soon after
// their last command (SRT_WARM_IDLE, 5 s unless set: TestMain).
func warmSetting() []string {
	var env []string
	for _, name := range []string{"SRT_WARM", "SRT_WARM_IDLE"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// findWarmServers are the pids of the warm servers for which match,
// given the server's working directory and program, holds (not the
// children a server forks, which look like it until they exec).
func findWarmServers(match func(cwd, prog string) bool) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(cmdline), "\x00")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		if len(args) < 2 || args[1] != warmwire.Arg || !match(cwd, args[0]) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		// pid (comm) state ppid ...: comm may hold spaces, not ")".
		if _, rest, ok := strings.Cut(string(stat), ") "); ok {
			if f := strings.Fields(rest); len(f) > 1 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
	}
	var pids []int
	for pid, ppid := range parent {
		if _, forked := parent[ppid]; !forked {
			pids = append(pids, pid)
		}
	}
	return pids
}

// warmServers are the pids of the warm servers working in dir.
func warmServers(dir string) []int {
	return findWarmServers(func(cwd, _ string) bool { return cwd == dir })
}

// stopWarmServers ends the warm servers working in dir or below it, and
// waits until they have: a server that ends leaves nothing behind (its
// socket, its prepared sandbox and that sandbox's placeholders and
// registry records go with it).
func stopWarmServers(t testing.TB, dir string) {
	t.Helper()
	under := func() []int {
		return findWarmServers(func(cwd, _ string) bool {
			return cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator))
		})
	}
	for _, pid := range under() {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(under()) > 0 {
		if time.Now().After(deadline) {
			t.Errorf("warm servers in %s still run 10 s after SIGTERM: %v", dir, under())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testDir is t.TempDir() for srt to run in: the warm servers working in
// any of the test's temporary directories end before they are removed.
func testDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, done := stopsWarm.LoadOrStore(t, true); !done {
		// The directories of t.TempDir are in one, removed after this
		// cleanup, which was registered after its removal.
		root := filepath.Dir(dir)
		t.Cleanup(func() { stopWarmServers(t, root) })
	}
	return dir
}

// stopsWarm holds the tests whose temporary directories' warm servers
// end with them (testDir).
var stopsWarm sync.Map

// srtCmd is srt as the tests start it: the built binary (srtBin) in dir,
// with this process's environment, HOME=dir, and env (NAME=VALUE, which
// win over both).
func srtCmd(t testing.TB, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(srtBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+dir), env...)
	return cmd
}

// srt runs srt in a project directory that is also its HOME, with stdin
// as its standard input, and returns its exit status and output.
func srt(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runSrt(t, srtCmd(t, dir, nil, args...), stdin)
}

// runSrt runs cmd (srtCmd's) to its end with stdin as its standard input
// ("": none), and returns its exit status and output; a process that
// could not run, or whose output stays open 10 s after it ended, fails
// the test.
func runSrt(t testing.TB, cmd *exec.Cmd, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("srt %q: %v\n%s", cmd.Args[1:], err, errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// publicDir is a new directory every user may enter, removed when the
// test ends: a home or project for a user other than the caller.
func publicDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "srt-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Cleanup(func() { stopWarmServers(t, dir) })
	testenv.Chmod(t, dir, 0o755)
	return dir
}

func project(t *testing.T) string {
	dir := testDir(t)
	testenv.WriteFile(t, filepath.Join(dir, "secret.env"), []byte("s3cret\n"), 0o644)
	return dir
}

// TestDebugRedactsProxyPassword: --debug prints the bubblewrap command
// line without the run's proxy password, which the command's
// HTTP_PROXY carries (debug output is pasted into bug reports).
func TestDebugRedactsProxyPassword(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	code, out, errOut := srt(t, dir, "", "--debug", "-c", `echo "$HTTP_PROXY"`)
	u, err := url.Parse(strings.TrimSpace(out))
	if code != 0 || err != nil || u.User == nil {
		t.Fatalf("exit %d, HTTP_PROXY %q (%v)\n%s", code, out, err, errOut)
	}
	token, ok := u.User.Password()
	if !ok || len(token) < 16 {
		t.Fatalf("HTTP_PROXY %q has no proxy password", out)
	}
	if !strings.Contains(errOut, "argv=") || !strings.Contains(errOut, "--setenv HTTP_PROXY") {
		t.Fatalf("no bubblewrap command line in the debug output:\n%s", errOut)
	}
	if strings.Contains(errOut, token) {
		t.Errorf("the debug output holds the proxy password %q:\n%s", token, errOut)
	}
	if !strings.Contains(errOut, sandbox.Redaction) {
		t.Errorf("the debug output does not show %s where the password was:\n%s", sandbox.Redaction, errOut)
	}
}

func TestExitCodesAndStdio(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	if code, _, errOut := srt(t, dir, "", "-c", "exit 7"); code != 7 {
		t.Errorf("exit 7: %d %s", code, errOut)
	}
	if code, out, _ := srt(t, dir, "ping\n", "-c", "read x; echo got:$x"); code != 0 || out != "got:ping\n" {
		t.Errorf("stdin: %d %q", code, out)
	}
	if code, _, _ := srt(t, dir, "", "-c", "kill -TERM $$"); code != 143 {
		t.Errorf("killed by SIGTERM: %d, want 143", code)
	}
	if code, out, _ := srt(t, dir, "", "--", "echo", "a  b", "$HOME"); code != 0 || out != "a  b $HOME\n" {
		t.Errorf("argv passes through unchanged: %d %q", code, out)
	}
	if code, _, errOut := srt(t, dir, ""); code != 1 || !strings.Contains(errOut, "No command specified") {
		t.Errorf("no command: %d %q", code, errOut)
	}
	// The built-in defaults (no settings file): no writes outside the
	// scratch paths, so not even in the working directory.
	if code, _, _ := srt(t, dir, "", "-c", "echo x > new"); code == 0 {
		t.Error("wrote in the working directory under the built-in defaults")
	}
	// Nothing left behind in the working directory.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in the working directory: %v", names)
	}
}

func TestSettingsRefusals(t *testing.T) {
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "empty.json"), nil, 0o644)
	testenv.WriteFile(t, filepath.Join(dir, "big.json"), make([]byte, 4<<20+1), 0o644)
	testenv.WriteFile(t, filepath.Join(dir, "bad.json"), []byte(`{"network": {"allowedDomains": ["https://x"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--settings", "missing.json", "true"}, "Error: missing.json does not exist."},
		{[]string{"--settings", "empty.json", "true"}, "empty.json:1:1: invalid JSON: the file is empty"},
		{[]string{"--settings", "bad.json", "true"}, "bad.json:1:33: network.allowedDomains[0]: must be a host name"},
		{[]string{"--settings", dir, "true"}, "could not be read"},
		{[]string{"--control-fd", "2", "true"}, "--control-fd must be an integer file descriptor >= 3"},
		{[]string{"--control-fd", "0x10", "true"}, "--control-fd must be an integer file descriptor >= 3"},
		{[]string{"--control-fd=-1", "true"}, "--control-fd must be an integer file descriptor >= 3"},
		{[]string{"--control-fd", "987", "true"}, "--control-fd 987: descriptor 987 is not open. The option reads settings, one JSON document a line, from a descriptor srt inherits open for reading (in a shell: srt --control-fd 987 -c CMD 987< FILE). Refusing to run the command"},
		{[]string{"--control-fd"}, "option --control-fd needs a value"},
		{[]string{"--bogus", "true"}, "unknown option --bogus"},
		// An empty name would silently run with the built-in defaults.
		{[]string{"--settings", "", "true"}, `--settings "" names no file`},
		{[]string{"--settings=", "true"}, `--settings "" names no file`},
		// The size limit in srtc's words.
		{[]string{"--settings", "big.json", "true"}, "big.json: the file is 4.0 MiB; a settings file may be at most 4.0 MiB"},
		{[]string{"doctor", "extra"}, "srt doctor takes no arguments"},
	}
	for _, tt := range tests {
		code, _, errOut := srt(t, dir, "", tt.args...)
		if code != 1 || !strings.Contains(errOut, tt.want) {
			t.Errorf("srt %v: %d %q, want exit 1 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestHelpAndVersion checks that help is printed, not acted on, and that
// --version says which build runs.
func TestHelpAndVersion(t *testing.T) {
	dir := project(t)
	for _, args := range [][]string{{"doctor", "--help"}, {"doctor", "-h"}} {
		code, out, errOut := srt(t, dir, "", args...)
		if code != 0 || !strings.HasPrefix(out, "Usage: srt doctor\n") || strings.Contains(out, "ok    ") || errOut != "" {
			t.Errorf("srt %v: %d %q %q", args, code, out, errOut)
		}
	}
	// srt run has its own help; srt's names srt run's.
	for _, args := range [][]string{{"run", "--help"}, {"run", "-h"}, {"run", "--plan", "p", "-h"}} {
		code, out, errOut := srt(t, dir, "", args...)
		if code != 0 || !strings.HasPrefix(out, "Usage: srt run --plan DIR") || !strings.Contains(out, "  --dry-run ") || strings.Contains(out, "--settings") || errOut != "" {
			t.Errorf("srt %v: %d %q %q", args, code, out, errOut)
		}
	}
	if code, out, _ := srt(t, dir, "", "--help"); code != 0 || !strings.HasPrefix(out, "Usage: srt [options]") || !strings.Contains(out, "srt run --help") {
		t.Errorf("srt --help: %d %q", code, out)
	}
	if got := versionLine(); !strings.HasPrefix(got, "srt ") || strings.Contains(got, "dev\n") || !strings.Contains(got, "revision") {
		t.Errorf("versionLine() = %q", got)
	}
}

// TestDoctorSrtc: srt doctor fails when srt finds no srtc to compile the
// settings with, or one that does not answer as srtc, and says what to do.
func TestDoctorSrtc(t *testing.T) {
	srtc := os.Getenv("SRTC")
	dir := testDir(t)
	notSrtc := filepath.Join(dir, "srtc")
	testenv.WriteFile(t, notSrtc, []byte("#!/bin/sh\nexit 3\n"), 0o755)
	tests := []struct {
		srtc, path string
		code       int
		want       string
	}{
		{"", dir + "/none", 1, "FAIL  srtc: not in " + filepath.Dir(os.Args[0]) + " nor on PATH: every run but srt run --plan fails, since srt compiles the settings with srtc\n" +
			"      fix: install srtc from the same source as srt, beside it: CGO_ENABLED=0 go install ./cmd/srtc (in srt's checkout); or set SRTC to its path\n"},
		{"", dir, 1, "FAIL  srtc: " + notSrtc + " --version did not answer as srtc does (exit status 3, \"\")"},
		{filepath.Join(dir, "none"), os.Getenv("PATH"), 1, "FAIL  srtc: SRTC=" + filepath.Join(dir, "none") + " is not an executable file"},
		{srtc, os.Getenv("PATH"), -1, "ok    srtc: " + srtc + ": srtc "},
	}
	for _, tt := range tests {
		t.Setenv("SRTC", tt.srtc)
		t.Setenv("PATH", tt.path)
		var out bytes.Buffer
		code := doctor(&out)
		if tt.code >= 0 && code != tt.code || !strings.Contains(out.String(), tt.want) {
			t.Errorf("SRTC=%s PATH=%s srt doctor: exit %d\n%s\nwant exit %d and %q", tt.srtc, tt.path, code, out.String(), tt.code, tt.want)
		}
	}
}

// TestSrtcMissingInstall: a run that finds no srtc says to install srt's
// programs with the README's command (CGO_ENABLED=0, srt-main and
// srt-init too), not a command that builds half of them.
func TestSrtcMissingInstall(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`CGO_ENABLED=0 go install( \./cmd/[a-z-]+)+`).Find(readme)
	if want == nil {
		t.Fatal("README.md has no install command")
	}
	t.Setenv("SRTC", "")
	t.Setenv("PATH", filepath.Join(t.TempDir(), "none"))
	if _, err := findSrtc(); err == nil || !strings.Contains(err.Error(), "("+string(want)+",") {
		t.Errorf("findSrtc() error = %v, want the README's %q", err, want)
	}
}

func TestSandboxPolicy(t *testing.T) {
	requireSandbox(t)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "backend") }))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	dir := project(t)
	settings := fmt.Sprintf(`{"network": {"allowedDomains": ["127.0.0.1:%s"], "deniedDomains": ["evil.example.com"]},
		"filesystem": {"denyRead": ["./secret.env"], "allowWrite": ["."], "denyWrite": []}}`, u.Port())
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(settings), 0o644)
	script := strings.Join([]string{
		`curl -s --noproxy "" -w " %{http_code}\n" ` + backend.URL + `/`,
		`curl -s --noproxy "" -o /dev/null -w "connect %{http_code}\n" -p ` + backend.URL + `/`,
		`curl -s -o /dev/null -w "denied %{http_code}\n" http://evil.example.com/`,
		`curl -s -o /dev/null -w "unlisted %{http_code}\n" http://other.example.com/`,
		`curl -s --noproxy "*" --max-time 5 ` + backend.URL + ` >/dev/null; echo "direct exit $?"`,
		`T=$(echo "$HTTP_PROXY" | sed 's/.*:\(.*\)@.*/\1/'); curl -s --noproxy "" --socks5-hostname localhost:1080 -U "srt:$T" -o /dev/null -w "socks %{http_code}\n" ` + backend.URL + `/`,
		`if cat secret.env >/dev/null 2>&1; then echo "read secret ok"; else echo "read secret refused"; fi`,
		`if echo x > new.txt; then echo "write cwd ok"; else echo "write cwd refused"; fi`,
		`if (echo x > $HOME/../outside) 2>/dev/null; then echo "write outside ok"; else echo "write outside refused"; fi`,
		`python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1`,
		`unshare -r true 2>&1 | tail -1`,
		`echo "sandbox $SANDBOX_RUNTIME"`,
		// The ProxyCommand of GIT_SSH_COMMAND, fed an HTTP request.
		`P=$(echo "$GIT_SSH_COMMAND" | sed "s/.*ProxyCommand='\([^ ]*\) .*/\1/"); printf 'GET /ssh HTTP/1.0\r\n\r\n' | "$P" ` + sandbox.ConnectArg + ` 127.0.0.1 ` + u.Port() + ` | tail -1; echo`,
		`printf 'x' | "$P" ` + sandbox.ConnectArg + ` evil.example.com 22 2>&1 | head -1`,
	}, "\n")
	code, out, errOut := srt(t, dir, "", "--settings", "s.json", "-c", script)
	want := "backend 200\nconnect 200\ndenied 403\nunlisted 403\ndirect exit 7\nsocks 200\nread secret refused\nwrite cwd ok\nwrite outside refused\nPermissionError: [Errno 1] Operation not permitted\nunshare: unshare failed: Operation not permitted\nsandbox 1\nbackend\nsrt: the sandbox's proxy refused evil.example.com:22: host is on the deny list\n"
	if code != 0 || out != want {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}

// cli starts srt in dir, with a fresh registry.
func cli(t *testing.T, dir string, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd, out, _ := cliStdin(t, dir, args...)
	return cmd, out
}

// cliStdin is cli with a pipe to the command's standard input.
func cliStdin(t *testing.T, dir string, args ...string) (*exec.Cmd, *bufio.Reader, io.WriteCloser) {
	t.Helper()
	cmd := srtCmd(t, dir, []string{"XDG_RUNTIME_DIR=" + filepath.Join(dir, ".run"), "XDG_STATE_HOME=" + filepath.Join(dir, ".run", "state")}, args...)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out), in
}

// TestSignals: SIGINT and SIGTERM sent to srt reach the command, which can
// handle them; its exit status is srt's.
func TestSignals(t *testing.T) {
	requireSandbox(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := project(t)
		cmd, out := cli(t, dir, "-c", `trap 'echo got $0; exit 42' INT TERM; echo ready; sleep 30 & wait`)
		if line, _ := out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("%v: %q", sig, line)
		}
		cmd.Process.Signal(sig)
		rest, _ := out.ReadString('\n')
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 42 || !strings.HasPrefix(rest, "got") {
			t.Errorf("%v: exit %d, output %q; want the trap's 42", sig, code, rest)
		}
	}
}

// TestKilled: when srt is killed with SIGKILL, the sandbox dies with it,
// and nothing is left behind: the reaper removes the placeholders and the
// scratch directory.
func TestKilled(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	marker := "31.4159"
	cmd, out := cli(t, dir, "--settings", "s.json", "-c", "echo ready; sleep "+marker)
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("%q", line)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".bashrc")); err != nil {
		t.Fatalf("no placeholder while the sandbox runs: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The sandbox is gone: no process runs the marker command.
	if left := waitGone("sleep " + marker); left != "" {
		t.Fatalf("sandbox processes outlived srt: %s", left)
	}
	// A warm server has prepared the next sandbox by now, whose
	// placeholders and registry record are there while it waits: once the
	// server has ended, what is left is the killed run's.
	stopWarmServers(t, dir)
	deadline := time.Now().Add(5 * time.Second)
	// The reaper removes what the killed run left, without another run.
	var names []string
	for {
		entries, _ := os.ReadDir(dir)
		names = names[:0]
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") == ".run s.json secret.env" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Join(names, " ") != ".run s.json secret.env" {
		t.Errorf("left in the working directory: %v", names)
	}
	left, _ := os.ReadDir(filepath.Join(dir, ".run", "srt", "placeholders"))
	for _, e := range left {
		if e.Name() != "check.lock" && e.Name() != "registry.lock" { // the registry's own locks stay
			t.Errorf("left in the registry: %v", left)
			break
		}
	}
}

// waitGone waits up to 5 s until no process's command line holds
// pattern (pgrep -f), and returns what pgrep still lists then.
func waitGone(pattern string) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := exec.Command("pgrep", "-f", pattern).Output()
		if len(b) == 0 || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKilledQuarantine: a protected name the command wrote is moved to
// the quarantine when srt was killed (by the reaper, without another
// run), and srt quarantine lists and releases it.
func TestKilledQuarantine(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	marker := "27.1828"
	t.Cleanup(func() {
		// The reaper ends once the registry holds only its locks (and a
		// warm server's prepared sandbox has gone with the server); the
		// project directory is removed after that.
		stopWarmServers(t, dir)
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			left, _ := os.ReadDir(filepath.Join(dir, ".run", "srt", "placeholders"))
			busy := false
			for _, e := range left {
				busy = busy || e.Name() != "check.lock" && e.Name() != "registry.lock"
			}
			if !busy {
				return
			}
		}
	})
	cmd, out := cli(t, dir, "--settings", "s.json", "-c", "mkdir a && echo evil > a/.bashrc && echo ready; sleep "+marker)
	if line, _ := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("%q", line)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Lstat(filepath.Join(dir, "a", ".bashrc")); err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a", ".bashrc")); err == nil {
		t.Fatal("a/.bashrc is still in the tree after srt was killed")
	}
	quarantine := func(args ...string) (int, string, string) {
		t.Helper()
		state := "XDG_STATE_HOME=" + filepath.Join(dir, ".run", "state")
		return runSrt(t, srtCmd(t, dir, []string{state}, append([]string{"quarantine"}, args...)...), "")
	}
	// The reaper moves the name out of the tree first and records it in
	// the quarantine after: the list shows it once the reaper is done.
	var code int
	var list, errOut string
	for {
		code, list, errOut = quarantine("list")
		if code != 0 || strings.Contains(list, filepath.Join(dir, "a", ".bashrc")) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	id, _, _ := strings.Cut(list, " ")
	if code != 0 || !strings.Contains(list, filepath.Join(dir, "a", ".bashrc")) {
		t.Fatalf("srt quarantine list: %d %q %s", code, list, errOut)
	}
	if code, _, errOut := quarantine("release", id); code != 0 {
		t.Fatalf("srt quarantine release %s: %d %s", id, code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a", ".bashrc")); string(b) != "evil\n" {
		t.Errorf("released a/.bashrc holds %q", b)
	}
	if code, list, _ := quarantine("list"); code != 0 || list != "" {
		t.Errorf("after release, srt quarantine list: %d %q", code, list)
	}
}

func TestRunPlanAndDoctor(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	p, diags, err := compiler.CompileFile("s.json", []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["./secret.env"], "allowWrite": ["."], "denyWrite": []}}`), schema.Options{})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	files, err := artifact.Build(p, []artifact.Target{artifact.Linux}, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan")
	for _, n := range files.Names() {
		testenv.MkdirAll(t, filepath.Dir(filepath.Join(plan, n)), 0o755)
		testenv.WriteFile(t, filepath.Join(plan, n), files[n], 0o644)
	}
	// Written here by the test, not by srtc compile: trusted as a
	// reviewer would.
	if code, _, errOut := srt(t, dir, "", "trust", plan); code != 0 {
		t.Fatalf("srt trust: %d %s", code, errOut)
	}
	code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "/bin/sh", "-c", "cat secret.env || echo hidden")
	if code != 0 || out != "hidden\n" {
		t.Errorf("run --plan: %d %q %s", code, out, errOut)
	}
	// The run options apply to a plan as to a settings file.
	code, _, errOut = srt(t, dir, "", "run", "--plan", plan, "--violations", "--audit-log", "audit.jsonl", "-c", "curl -s -o /dev/null http://denied.test/")
	if code != 0 || !strings.HasSuffix(errOut, "<sandbox_violations>\ndeny network-outbound denied.test:80 (host is not on the allow list)\n</sandbox_violations>\n") {
		t.Errorf("run --plan --violations: %d %q", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl")); err != nil || !strings.Contains(string(b), `"host":"denied.test"`) {
		t.Errorf("run --plan --audit-log: %v %q", err, b)
	}
	// The audit log records what an audit needs, never the arguments,
	// which can carry secrets.
	code, _, errOut = srt(t, dir, "", "run", "--plan", plan, "--audit-log", "audit2.jsonl", "--", "/bin/sh", "-c", "curl -s -o /dev/null -H 'Authorization: Bearer s3cr3t-token' http://denied.test/; exit 3")
	b, err := os.ReadFile(filepath.Join(dir, "audit2.jsonl"))
	if code != 3 || err != nil || strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "curl") {
		t.Errorf("audit log with a secret argument: %d %v %s\n%s", code, err, errOut, b)
	}
	for _, want := range []string{`"event":"start"`, `"event":"exit"`, `"program":"sh"`, `"args":2`, `"exitStatus":3`, `"settings":"s.json"`, `"settingsSha256":"` + p.SourceSHA256 + `"`, `"user":"`, `"host":"denied.test"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("audit log lacks %s:\n%s", want, b)
		}
	}
	if code, _, errOut := srt(t, dir, "", "run", "--plan", plan, "--settings", "s.json", "true"); code != 1 || !strings.Contains(errOut, "--settings does not apply") {
		t.Errorf("run --plan --settings: %d %q", code, errOut)
	}
	code, out, _ = srt(t, dir, "", "run", "--plan", plan, "--dry-run", "--", "true")
	if code != 0 || !regexp.MustCompile(`(?m)^--unshare-net +# bwrap.args:\d+\n`).MatchString(out) || !regexp.MustCompile(`\n--seccomp +# bwrap.args:(\d+)\n3 +# bwrap.args:\d+\n`).MatchString(out) {
		t.Errorf("dry run: %d %q", code, out)
	}
	testenv.WriteFile(t, filepath.Join(plan, "linux", "bwrap.args"), []byte("tampered"), 0o644)
	if code, _, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "true"); code != 1 || !strings.Contains(errOut, "was changed after srtc compiled it") {
		t.Errorf("tampered plan: %d %q", code, errOut)
	}
	// The host CI runs on must pass every check.
	if code, out, errOut := srt(t, dir, "", "doctor"); code != 0 || !strings.Contains(out, "ok    bubblewrap:") || strings.Contains(out, ": \n") {
		t.Errorf("doctor: %d\n%s%s", code, out, errOut)
	}
}

// TestStdioJSONRPC: a stdio JSON-RPC server (the MCP case) answers each
// request through the sandbox, line by line, unbuffered.
func TestStdioJSONRPC(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	server := `import sys, json
for line in sys.stdin:
    req = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": req["method"] + "!"}), flush=True)`
	cmd, out, in := cliStdin(t, dir, "--", "python3", "-c", server)
	defer cmd.Wait()
	defer in.Close()
	for i, method := range []string{"initialize", "tools/list"} {
		fmt.Fprintf(in, `{"jsonrpc": "2.0", "id": %d, "method": %q}`+"\n", i, method)
		line, err := out.ReadString('\n')
		want := fmt.Sprintf(`{"jsonrpc": "2.0", "id": %d, "result": "%s!"}`+"\n", i, method)
		if err != nil || line != want {
			t.Fatalf("reply %d: %q, %v; want %q", i, line, err, want)
		}
	}
}

// TestTTY: a command run from a terminal sees one.
func TestTTY(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "script")
	dir := project(t)
	cmd := exec.Command("script", "-qec", srtBin+" -c 'test -t 0 && test -t 1 && echo on-a-tty'", "/dev/null")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "on-a-tty") {
		t.Errorf("tty: %q, %v", out, err)
	}
}

// TestAsNobody runs srt as an unprivileged user: the policy holds, and
// the user's files are what changes.
func TestAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody; as a user the other tests already run unprivileged")
	}
	port := backendPort(t)
	bin, root := srtBin, publicDir(t)
	home := filepath.Join(root, "home")
	testenv.MkdirAll(t, filepath.Join(home, "proj", ".git", "hooks"), 0o755)
	testenv.WriteFile(t, filepath.Join(home, "proj", "secret.env"), []byte("s\n"), 0o644)
	testenv.WriteFile(t, filepath.Join(home, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["**/*.env"], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	script := strings.Join([]string{
		`id -u`,
		`if echo x > new.txt; then echo "write cwd ok"; else echo "write cwd refused"; fi`,
		`if cat secret.env >/dev/null 2>&1; then echo "read env ok"; else echo "read env refused"; fi`,
		`if touch .git/hooks/x 2>/dev/null; then echo "hook ok"; else echo "hook refused"; fi`,
		`python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1`,
		// The control line (below) opens the backend; refusals are printed.
		`for i in $(seq 300); do c=$(curl -s --noproxy "" -o /dev/null -w "%{http_code}" http://127.0.0.1:` + port + `/); [ "$c" = 200 ] && break; sleep 0.03; done; echo "control $c"`,
		`curl -s -o /dev/null http://denied.test/`,
	}, "; ")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, `{"network": {"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": []}, "filesystem": {"denyRead": ["**/*.env"], "allowWrite": ["."], "denyWrite": []}}`+"\n")
	w.Close()
	defer r.Close()
	cmd := exec.Command(bin, "--settings", filepath.Join(home, "s.json"), "--control-fd", "3", "--violations", "--audit-log", filepath.Join(home, "audit.jsonl"), "-c", script)
	cmd.ExtraFiles = []*os.File{r}
	cmd.Dir = filepath.Join(home, "proj")
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC")}, warmSetting()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	// srt reads the control line while the command starts: the first
	// tries of the backend may come before it, and are refused.
	early := "deny network-outbound 127.0.0.1:" + port + " (host is not on the allow list)\n"
	tries := strings.Count(string(out), early)
	got := strings.ReplaceAll(string(out), early, "")
	got = strings.ReplaceAll(got, `srt sandbox refused 127.0.0.1:`+port+`: it is not in network.allowedDomains. To allow it, add "127.0.0.1:`+port+`" to network.allowedDomains in `+filepath.Join(home, "s.json")+".\n", "")
	// The refusal after the control line names it, the settings in force.
	want := "65534\nwrite cwd ok\nread env refused\nhook refused\nPermissionError: [Errno 1] Operation not permitted\ncontrol 200\n" +
		`srt sandbox refused denied.test:80: it is not in network.allowedDomains. To allow it, add "denied.test" to network.allowedDomains in line 1 of --control-fd 3.` + "\n" +
		"srt sandbox refused creating " + filepath.Join(home, "proj", ".git", "hooks", "x") + ": srt protects it whatever the settings say: a shell's start-up file, git's configuration or hooks, or an editor's or agent's settings would run code on the host later (docs/security.md).\n" +
		"<sandbox_violations>\ndeny network-outbound denied.test:80 (host is not on the allow list)\n" +
		"deny file-write-create " + filepath.Join(home, "proj", ".git", "hooks", "x") + " (create: protected by srt)\n</sandbox_violations>\n"
	if err != nil || got != want {
		t.Errorf("as nobody: %v\n%s\nwant:\n%s", err, out, want)
	}
	if audit, err := os.ReadFile(filepath.Join(home, "audit.jsonl")); err != nil || strings.Count(string(audit), "\n") != 5+tries { // start, two decisions, the refused hook, exit
		t.Errorf("audit log: %v %q", err, audit)
	}
	if fi, err := os.Stat(filepath.Join(home, "proj", "new.txt")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Errorf("the file written is not nobody's: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(home, "proj", ".bashrc")); err == nil {
		t.Error("placeholder left behind")
	}
}

// TestPolicyCache: a compiled policy is reused, and a changed file is
// compiled again.
func TestPolicyCache(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	log := filepath.Join(dir, "calls")
	wrapper := filepath.Join(t.TempDir(), "srtc")
	testenv.WriteFile(t, wrapper, []byte("#!/bin/sh\necho call >> "+log+"\nexec "+os.Getenv("SRTC")+" \"$@\"\n"), 0o755)
	t.Setenv("SRTC", wrapper)
	calls := func() int { b, _ := os.ReadFile(log); return strings.Count(string(b), "call") }
	settings := filepath.Join(dir, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	for i := 0; i < 2; i++ {
		if code, _, errOut := srt(t, dir, "", "--settings", settings, "true"); code != 0 {
			t.Fatalf("run %d: %d %s", i, code, errOut)
		}
	}
	if n := calls(); n != 1 {
		t.Errorf("srtc ran %d times for the same file, want 1", n)
	}
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": ["x.com"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	if code, _, errOut := srt(t, dir, "", "--settings", settings, "true"); code != 0 || calls() != 2 {
		t.Errorf("a changed file: exit %d, %d srtc runs (want 2): %s", code, calls(), errOut)
	}
}

// TestRefusesWhatItCannotEnforce: settings whose network rules srt
// cannot enforce as written stop it, with the file and the keys named.
func TestRefusesWhatItCannotEnforce(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := filepath.Join(dir, "s.json")
	for _, c := range []struct{ network, want string }{
		// Both would intercept the same connections.
		{`"mitmProxy": {"socketPath": "/tmp/mitm.sock", "domains": ["example.com"]}, "tlsTerminate": {}`,
			"Error: " + settings + ": network.tlsTerminate and network.mitmProxy cannot be used together (both would intercept the same TLS connections): remove one of them\n"},
	} {
		testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": ["example.com"], "deniedDomains": [], `+c.network+`}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
		code, out, errOut := srt(t, dir, "", "--settings", settings, "echo", "ran")
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.network, code, out, errOut)
		}
	}
}

// TestHostnameToLoopback: a host name that resolves to 127.0.0.1 is
// refused by the resolved-address guard unless the literal is allowed. The
// test gives srt a private /etc/hosts (a mount namespace of its own), so it
// needs root; CI runs as root.
func TestHostnameToLoopback(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private /etc/hosts")
	}
	testenv.Require(t, "unshare", "mount")
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "backend") }))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	dir := project(t)
	hosts := filepath.Join(dir, "hosts")
	testenv.WriteFile(t, hosts, []byte("127.0.0.1 vm.test\n"), 0o644)
	for _, tt := range []struct {
		allowed string
		want    string
	}{
		{`["vm.test"]`, "403 blocked-by-sandbox-runtime"},
		{`["vm.test", "127.0.0.1:` + u.Port() + `"]`, "200 -"},
	} {
		settings := filepath.Join(dir, "s.json")
		testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": `+tt.allowed+`, "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
		script := `curl -s -D - -o /dev/null http://vm.test:` + u.Port() + `/ | tr -d '\r' | awk '/^HTTP/{c=$2} /^X-Proxy-Error/{e=$2} END{if(e=="")e="-"; print c, e}'`
		cmd := exec.Command("unshare", "-m", "sh", "-c", `mount --make-rprivate / && mount --bind "$1" /etc/hosts && exec "$2" --refusals never --settings "$3" -c "$4"`, "sh", hosts, srtBin, settings, script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tt.want {
			t.Errorf("allowed %s: %q, %v; want %q", tt.allowed, out, err, tt.want)
		}
	}
}
