//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
)

const noNetwork = `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`

func allowLine(port string) string {
	return `{"network": {"allowedDomains": ["127.0.0.1:` + port + `"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
}

func backendPort(t *testing.T) string {
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "backend") }))
	t.Cleanup(b.Close)
	u, _ := url.Parse(b.URL)
	return u.Port()
}

// srtWithControl starts srt with the read end of a pipe
// at descriptor 9 and --control-fd 9; it returns the pipe's write end.
func srtWithControl(t *testing.T, dir string, fdFile *os.File, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	cmd := srtCmd(t, dir, nil, append([]string{"--settings", "s.json", "--control-fd", "9"}, args...)...)
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, fdFile} // fd 9
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, in, bufio.NewReader(out), &errb
}

// TestControlFD: lines on the control descriptor replace the network
// rules of a running command; invalid lines are reported and dropped; the
// command never holds the descriptor; srt ends with the command while the
// writer still holds its end.
func TestControlFD(t *testing.T) {
	requireSandbox(t)
	port := backendPort(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(noNetwork), 0o644)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	script := `if [ -e /proc/self/fd/9 ]; then echo "fd 9 open: $(readlink /proc/self/fd/9)"; else echo "fd 9 absent"; fi
while read x; do curl -s --noproxy "" -o /dev/null -w "%{http_code}\n" http://127.0.0.1:` + port + `/; done`
	cmd, in, out, errb := srtWithControl(t, dir, r, "-c", script)
	r.Close()
	line := func() string {
		s, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the command's output: %v; stderr:\n%s", err, errb)
		}
		return strings.TrimSpace(s)
	}
	if got := line(); got != "fd 9 absent" {
		t.Errorf("inside the sandbox: %s", got)
	}
	// probe asks the command to connect until it sees want.
	probe := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			io.WriteString(in, "go\n")
			got := line()
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("still %s, want %s; stderr:\n%s", got, want, errb)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	probe("403")
	io.WriteString(w, allowLine(port)+"\n")
	probe("200")
	// Invalid and blank lines change nothing; the line is not echoed.
	io.WriteString(w, `{"network": {"allowedDomains": ["SECRET-MARKER"]`+"\n   \n\n")
	io.WriteString(w, `{"network": {"allowedDomains": ["https://x"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`+"\n")
	probe("200")
	// CRLF is tolerated; a file-system change is applied to the network
	// part only, and said so.
	io.WriteString(w, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["/etc"], "allowWrite": [], "denyWrite": []}}`+"\r\n")
	probe("403")
	// Said again for a repeat: the sandbox still has the rules it started
	// with, not those of the last line.
	io.WriteString(w, `{"network": {"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": []}, "filesystem": {"denyRead": ["/etc"], "allowWrite": [], "denyWrite": []}}`+"\n")
	probe("200")
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("srt: %v\n%s", err, errb)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("srt did not end with its command while the control writer is open")
	}
	stderr := errb.String()
	for _, want := range []string{
		"srt: invalid config on control fd 9 (line 2): not a valid settings document (run with --debug to see why); ignored, the previous config is still in force",
		"srt: invalid config on control fd 9 (line 5): not a valid settings document",
		"srt: control fd 9 (line 6): the network rules and credentials.sigv4 are updated; file-system and process rules, the other credential settings, the parent proxy, the external proxy ports and TLS termination itself cannot change in a running sandbox",
		"srt: control fd 9 (line 7): the network rules and credentials.sigv4 are updated;",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "SECRET-MARKER") || strings.Contains(stderr, "line 3") || strings.Contains(stderr, "line 4") {
		t.Errorf("stderr echoes a line or reports a blank one:\n%s", stderr)
	}
}

// TestControlReadEndsWithTheRun: when srt's run ends, the reading of
// --control-fd has ended too, while the writer still holds its end and
// has written half a line, which is dropped unsaid.
func TestControlReadEndsWithTheRun(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil { // inherited, as srt sees it: no close-on-exec
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	unix.Write(p[1], []byte(`{"network": {`))
	fd := strconv.Itoa(p[0])
	code, _, errOut := srt(t, dir, "", "--control-fd", fd, "-c", "sleep 0.2")
	if code != 0 || strings.Contains(errOut, "control fd") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "(*controller).read") {
		t.Errorf("the reader of --control-fd outlives the run:\n%s", stacks)
	}
}

// TestControlFDEarlyLine: a line written before the sandbox is up waits
// in the descriptor and is applied.
func TestControlFDEarlyLine(t *testing.T) {
	requireSandbox(t)
	port := backendPort(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(noNetwork), 0o644)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, allowLine(port)+"\n")
	w.Close() // and then the writer is gone: end of input is not an error
	script := `for i in $(seq 300); do c=$(curl -s --noproxy "" -o /dev/null -w "%{http_code}" http://127.0.0.1:` + port + `/); [ "$c" = 200 ] && break; sleep 0.03; done; echo $c`
	cmd, _, out, errb := srtWithControl(t, dir, r, "-c", script)
	r.Close()
	got, _ := out.ReadString('\n')
	if err := cmd.Wait(); err != nil || got != "200\n" {
		t.Errorf("%q %v\n%s", got, err, errb)
	}
}

// TestControlFDUnusable: a write-only descriptor, and a number srt did
// not inherit open (its own descriptors hold it, such as the Go runtime's
// cgroup files and poller), are refused before the command runs.
func TestControlFDUnusable(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(noNetwork), 0o644)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, _, _, errb := srtWithControl(t, dir, w, "-c", "touch ran")
	w.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "Error: --control-fd 9: descriptor 9 is open for writing only. The option reads settings") {
		t.Errorf("%v %s", err, errb)
	}
	// Numbers srt was not passed, some of them its own descriptors.
	for fd := 3; fd <= 9; fd++ {
		cmd := srtCmd(t, dir, nil, "--settings", "s.json", "--control-fd", strconv.Itoa(fd), "-c", "touch ran")
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("Error: --control-fd %d: descriptor %d is not open. The option reads settings, one JSON document a line, from a descriptor srt inherits open for reading (in a shell: srt --control-fd %d -c CMD %d< FILE). Refusing to run the command without the control channel it asks for.\n", fd, fd, fd, fd)
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || string(out) != want {
			t.Errorf("--control-fd %d, not passed: %v %q\nwant %q", fd, err, out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
}

type failingReader struct{ data string }

func (f *failingReader) Read(b []byte) (int, error) {
	if f.data == "" {
		return 0, errors.New("EIO")
	}
	n := copy(b, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestControlReadErrors: a descriptor that fails before any line stops the
// command (read returns an error); after a line it is only reported.
func TestControlReadErrors(t *testing.T) {
	var errb bytes.Buffer
	c := &controller{fd: 7, stderr: &errb}
	if err := c.read(&failingReader{}); err == nil || !strings.Contains(errb.String(), "failed before any line") {
		t.Errorf("%v %q", err, errb.String())
	}
	errb.Reset()
	if err := c.read(&failingReader{data: "\n"}); err != nil || !strings.Contains(errb.String(), "the last config stays in force") {
		t.Errorf("after a line: %v %q", err, errb.String())
	}
	errb.Reset()
	if err := c.read(strings.NewReader(strings.Repeat("x", 5<<20) + "\n")); err != nil || !strings.Contains(errb.String(), "(line 1): longer than") {
		t.Errorf("a long line: %v %q", err, errb.String())
	}
}

// TestViolationsAndAuditLog: --violations prints the refusals after the
// command; --audit-log records every decision.
func TestViolationsAndAuditLog(t *testing.T) {
	requireSandbox(t)
	port := backendPort(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": ["evil.test"], "deniedDomainReasons": {"evil.test": "exfiltration <risk>"}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	script := `curl -s --noproxy "" -o /dev/null http://127.0.0.1:` + port + `/; curl -s -o /dev/null http://evil.test/; curl -s -o /dev/null -p https://other.test/; exit 4`
	code, _, errOut := srt(t, dir, "", "--settings", "s.json", "--violations", "--audit-log", "audit.jsonl", "-c", script)
	wantBlock := "<sandbox_violations>\ndeny network-outbound evil.test:80 (exfiltration risk)\ndeny network-outbound other.test:443 (host is not on the allow list)\n</sandbox_violations>\n"
	if code != 4 || !strings.HasSuffix(errOut, wantBlock) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with:\n%s", code, errOut, wantBlock)
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got, events []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event, Proxy, Host, Reason, Rule, Stage string
			Port                                    int
			Allow                                   bool
			ExitStatus                              *int
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if r.Event != "" {
			events = append(events, r.Event)
			if r.Event == "exit" && (r.ExitStatus == nil || *r.ExitStatus != 4) {
				t.Errorf("exit record without the command's status 4: %s", l)
			}
			continue
		}
		got = append(got, fmt.Sprintf("%s %s:%d allow=%v rule=%s reason=%s", r.Proxy, r.Host, r.Port, r.Allow, r.Rule, r.Reason))
	}
	if strings.Join(events, " ") != "start exit" {
		t.Errorf("run records %q, want a start and an exit record", events)
	}
	want := []string{
		"http 127.0.0.1:" + port + " allow=true rule=127.0.0.1:" + port + " reason=",
		"http evil.test:80 allow=false rule=evil.test reason=exfiltration <risk>",
		"connect other.test:443 allow=false rule= reason=host is not on the allow list",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fi, _ := os.Stat(filepath.Join(dir, "audit.jsonl")); fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v", fi.Mode())
	}
	// Without --violations nothing is printed.
	if _, _, errOut := srt(t, dir, "", "--settings", "s.json", "-c", "curl -s -o /dev/null http://evil.test/"); strings.Contains(errOut, "sandbox_violations") {
		t.Errorf("printed without --violations: %s", errOut)
	}
}

// TestControlLineWeaker: a line asking for what srt cannot enforce is
// refused whole; the previous config stays.
func TestControlLineWeaker(t *testing.T) {
	dir := project(t)
	t.Setenv("HOME", dir)
	p, err := compilePolicy("s.json", []byte(noNetwork), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewManager(p, sandbox.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	c := &controller{m: m, start: p, fd: 5, stderr: &errb}
	line := `{"network": {"allowedDomains": ["example.com"], "deniedDomains": [], "tlsTerminate": {}, "mitmProxy": {"socketPath": "/tmp/mitm.sock", "domains": ["example.com"]}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	c.read(strings.NewReader(line + "\n"))
	if !strings.Contains(errb.String(), "(line 1): line 1 of --control-fd 5: network.tlsTerminate and network.mitmProxy cannot be used together") || m.Policy() != p {
		t.Errorf("%q", errb.String())
	}
}

// TestInheritedDescriptors: a descriptor srt inherits (here one open on a
// file the settings hide) does not reach the command.
func TestInheritedDescriptors(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["./secret.env"], "allowWrite": [], "denyWrite": []}}`), 0o644)
	secret, err := os.Open(filepath.Join(dir, "secret.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Close()
	cmd := srtCmd(t, dir, nil, "--settings", "s.json", "-c", `cat secret.env 2>/dev/null || echo hidden; { cat <&7; } 2>/dev/null || echo "fd 7 closed"; ls /proc/self/fd | tr '\n' ' '`)
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, secret} // fd 7
	out, err := cmd.CombinedOutput()
	// ls sees 0-2 and its own directory descriptor, nothing else.
	if err != nil || string(out) != "hidden\nfd 7 closed\n0 1 2 3 " {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestStateProtected: srt's policy cache (and its placeholder registry)
// are read-only in the sandbox even when the settings allow writing where
// they are, so a command cannot rewrite the policy a later run uses.
func TestStateProtected(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	// TestMain's cache directory, private to this test binary: a write
	// root at /tmp would also take in what other tests make there, and the
	// check after the run would move their protected names away.
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		t.Fatal("XDG_CACHE_HOME is not set")
	}
	for _, fs := range []string{`"denyRead": [], "allowWrite": [` + strconv.Quote(cache) + `, "."], "denyWrite": []`, `"denyRead": [], "allowWrite": [], "denyWrite": [], "disabled": true`} {
		testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {`+fs+`}}`), 0o644)
		script := `ls "$XDG_CACHE_HOME"/srt/policies-v*/ | grep -q json && echo "cache readable"
for f in "$XDG_CACHE_HOME"/srt/policies-v*/*.json; do echo '{}' > "$f" 2>/dev/null && echo "rewrote $f"; done
touch "$XDG_CACHE_HOME"/srt/new 2>/dev/null && echo "created in the cache"
echo x > "$XDG_CACHE_HOME"/srt-state-test-$$ && echo "wrote beside it" && rm "$XDG_CACHE_HOME"/srt-state-test-$$`
		code, out, errOut := srt(t, dir, "", "--settings", "s.json", "-c", script)
		if code != 0 || out != "cache readable\nwrote beside it\n" {
			t.Errorf("%s: exit %d\n%s\n%s", fs, code, out, errOut)
		}
	}
}
