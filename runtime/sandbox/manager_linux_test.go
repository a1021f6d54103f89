//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/violations"
	"srt.dev/schema"
)

// TestMain lets the test binary be the sandbox's init step, as srt is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == InitArg || os.Args[1] == LimitArg) {
		os.Exit(initstep.Main(os.Args[1:]))
	}
	if spec := os.Getenv(watchBenchEnv); spec != "" {
		watchBenchChild(spec)
	}
	if len(os.Args) > 1 && os.Args[1] == ReapArg {
		// The reaper a run starts (without this the binary would run the
		// tests again, and each of their runs another reaper).
		if err := Reap(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "reap: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The quarantine of protected names goes to a scratch state directory.
	state, err := os.MkdirTemp("", "srt-test-state-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "state directory: %v\n", err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	os.Setenv("XDG_RUNTIME_DIR", state) // a placeholder registry of its own
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

func backend(t *testing.T) (port string) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "backend") }))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u.Port()
}

func compile(t *testing.T, network string) *policy.Policy {
	t.Helper()
	return compileFull(t, `{"network": {`+network+`}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
}

func compileFull(t *testing.T, settings string) *policy.Policy {
	t.Helper()
	p, diags, err := compiler.CompileFile("settings.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("%s: %v %v", settings, err, diags)
	}
	return p
}

// sh runs a shell script in a sandbox of m and returns its stdout.
func sh(t *testing.T, m *Manager, o Options, script string) (string, *Result) {
	t.Helper()
	var out, errb strings.Builder
	o.Stdout, o.Stderr, o.Stdin = &out, &errb, strings.NewReader("")
	dir := t.TempDir()
	o.Home, o.Cwd = dir, dir
	res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errb.String())
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %s", res.ExitCode, errb.String())
	}
	return out.String(), res
}

func lines(entries []violations.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Line)
	}
	return out
}

// curl asks the proxy even for 127.0.0.1, which NO_PROXY lists.
const curl = `curl -s --noproxy "" -o /dev/null -w "%{http_code}\n" `

// TestAsk: the callback decides what no rule decides; every kind of
// answer, and never under strictAllowlist.
func TestAsk(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	port := backend(t)
	target := "http://127.0.0.1:" + port + "/"
	var mu sync.Mutex
	var asked []string
	answers := []func() (bool, string, error){
		func() (bool, string, error) { return true, "", nil },
		func() (bool, string, error) { return false, "no <evil.com> today\n\tok", nil },
		func() (bool, string, error) { return false, "  \n\u200b ", nil },
		func() (bool, string, error) { return false, "", errors.New("prompt closed") },
		func() (bool, string, error) { panic("callback bug") },
		func() (bool, string, error) { return false, strings.Repeat("é", 600), nil },
	}
	ask := func(ctx context.Context, host string, p int) (bool, string, error) {
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s:%d", host, p))
		next := answers[0]
		answers = answers[1:]
		mu.Unlock()
		return next()
	}
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": ["denied.test"]`), ManagerOptions{Ask: ask})
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Repeat(curl+target+"\n", 6) + curl + "http://denied.test/\n"
	out, res := sh(t, m, Options{}, script)
	if want := "200\n403\n403\n403\n403\n403\n403\n"; out != want {
		t.Errorf("codes:\n%s\nwant:\n%s", out, want)
	}
	hp := "127.0.0.1:" + port
	want := []string{
		"deny network-outbound " + hp + " (no evil.com today ok)",
		"deny network-outbound " + hp + " (user denied)",
		"deny network-outbound " + hp + " (permission prompt failed)",
		"deny network-outbound " + hp + " (permission prompt failed)",
		"deny network-outbound " + hp + " (" + strings.Repeat("é", 500) + ")",
		"deny network-outbound denied.test:80 (host is on the deny list)",
	}
	if got := lines(res.Violations); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(asked) != 6 || asked[0] != hp {
		t.Errorf("asked %v: the deny list must decide before the callback", asked)
	}

	// Under strictAllowlist the callback is never asked.
	strict, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": [], "strictAllowlist": true`), ManagerOptions{
		Ask: func(context.Context, string, int) (bool, string, error) {
			t.Error("asked under strictAllowlist")
			return true, "", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := sh(t, strict, Options{}, curl+target); out != "403\n" {
		t.Errorf("strict: %q", out)
	}
}

// TestPerCommandLists: a list registered for an id applies to that
// command's sandbox only, whatever user name another command sends; ids
// must be long; registering again replaces.
func TestPerCommandLists(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	port := backend(t)
	target := "http://127.0.0.1:" + port + "/"
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": ["127.0.0.2"]`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idA, idB := "cmd-A-0123456789abcdefghij", "cmd-B-0123456789abcdefghij"
	list, err := compiler.AllowList([]string{"127.0.0.1:" + port, "127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterCommandNetworkLists(idA, list); err != nil {
		t.Fatal(err)
	}
	for _, short := range []string{"", "short-id-123", strings.Repeat("x", 21), strings.Repeat("x", 21) + "\uFFFD\uFFFD", strings.Repeat("\uFFFD", 40)} {
		err := m.RegisterCommandNetworkLists(short, list)
		if err == nil || (short != "" && strings.Contains(err.Error(), short)) {
			t.Errorf("id %q: %v (must be refused without repeating the id)", short, err)
		}
	}
	m.UnregisterCommandNetworkLists("never-registered-0123456789") // a no-op

	// A: allowed by its list; the deny list still wins over it.
	if out, _ := sh(t, m, Options{CommandID: idA}, curl+target+"\n"+curl+"http://127.0.0.2/"); out != "200\n403\n" {
		t.Errorf("A: %q", out)
	}
	// B: not allowed, not even when it sends A's attribution key as its
	// proxy user name.
	forged := "srt." + base64.StdEncoding.EncodeToString([]byte(idA))
	script := curl + target + "\n" +
		`T=$(echo "$HTTP_PROXY" | sed 's/.*:\(.*\)@.*/\1/'); ` + curl + `-x "http://` + url.QueryEscape(forged) + `:$T@localhost:3128" ` + target
	out, res := sh(t, m, Options{CommandID: idB}, script)
	if out != "403\n403\n" {
		t.Errorf("B: %q", out)
	}
	for _, v := range res.Violations {
		if v.Key != violations.Key(idB) {
			t.Errorf("B's refusal attributed to %q", v.Key)
		}
	}
	// Registering A again replaces its list.
	other, _ := compiler.AllowList([]string{"127.0.0.3"})
	m.RegisterCommandNetworkLists(idA, other)
	if out, _ := sh(t, m, Options{CommandID: idA}, curl+target); out != "403\n" {
		t.Errorf("A after re-registering: %q", out)
	}
	// Under strictAllowlist per-command lists do not apply.
	strict, _ := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": [], "strictAllowlist": true`), ManagerOptions{})
	strict.RegisterCommandNetworkLists(idA, list)
	if out, _ := sh(t, strict, Options{CommandID: idA}, curl+target); out != "403\n" {
		t.Errorf("strict: %q", out)
	}
}

// TestConcurrentAttribution: commands running at the same time get their
// own refusals, in their results and in the store.
func TestConcurrentAttribution(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	var audit strings.Builder
	var amu sync.Mutex
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{Audit: writerFunc(func(b []byte) (int, error) {
		amu.Lock()
		defer amu.Unlock()
		return audit.Write(b)
	})})
	if err != nil {
		t.Fatal(err)
	}
	const n = 15
	var wg sync.WaitGroup
	results := map[string]*Result{}
	var mu sync.Mutex
	for _, name := range []string{"alpha", "beta", "gamma"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := fmt.Sprintf("for i in $(seq %d); do curl -s -o /dev/null http://%s-$i.test/; done", n, name)
			_, res := sh(t, m, Options{CommandID: name + "-0123456789abcdefghijkl"}, script)
			mu.Lock()
			results[name] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, res := range results {
		key := violations.Key(name + "-0123456789abcdefghijkl")
		stored := m.Violations().For(key)
		if len(res.Violations) != n || len(stored) != n {
			t.Errorf("%s: %d in its result, %d in the store, want %d", name, len(res.Violations), len(stored), n)
		}
		for _, v := range append(res.Violations, stored...) {
			if !strings.Contains(v.Line, " "+name+"-") || v.Key != key {
				t.Errorf("%s got %q (key %s)", name, v.Line, v.Key)
			}
		}
	}
	if m.Violations().Total() != 3*n {
		t.Errorf("total %d", m.Violations().Total())
	}
	if got := strings.Count(audit.String(), `"allow":false`); got != 3*n {
		t.Errorf("audit log: %d refusals, want %d", got, 3*n)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestUpdateWhileRunning: a new network policy applies to the next
// connection of a command already running.
func TestUpdateWhileRunning(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	port := backend(t)
	target := "http://127.0.0.1:" + port + "/"
	closed := compile(t, `"allowedDomains": [], "deniedDomains": []`)
	open := compile(t, `"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": []`)
	m, err := NewManager(closed, ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if FixedPartsDiffer(closed, open) {
		t.Error("a network-only change counted as a file-system change")
	}
	if !FixedPartsDiffer(closed, compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["/etc"], "allowWrite": [], "denyWrite": []}}`)) {
		t.Error("a file-system change was not noticed")
	}
	// The command reports each code it sees, until it has seen 403, 200
	// and 403 again; the test flips the policy as the codes arrive.
	script := `want=403; for i in $(seq 400); do c=$(` + curl + target + `); if [ "$c" = "$want" ]; then echo $c; case $want.$n in 403.) want=200; n=1;; 200.1) want=403; n=2;; 403.2) exit 0;; esac; fi; sleep 0.02; done; exit 1`
	pr, pw := io.Pipe()
	var errb strings.Builder
	done := make(chan *Result, 1)
	go func() {
		dir := t.TempDir()
		res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{Stdout: pw, Stderr: &errb, Stdin: strings.NewReader(""), Home: dir, Cwd: dir})
		if err != nil {
			t.Error(err)
		}
		pw.Close()
		done <- res
	}()
	var seen []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		switch len(seen) {
		case 1:
			m.Update(open)
		case 2:
			m.Update(closed)
		}
	}
	res := <-done
	if strings.Join(seen, " ") != "403 200 403" || res == nil || res.ExitCode != 0 {
		t.Errorf("saw %v, exit %v, stderr %s", seen, res, errb.String())
	}
}

// TestCancel: ending the context stops the command with SIGTERM.
func TestCancel(t *testing.T) {
	testenv.Require(t, "bwrap")
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The context ends once the command has set its trap (it says "up"),
	// however long a loaded machine takes to start it.
	out := &cancelOn{word: "up\n", cancel: cancel}
	dir := t.TempDir()
	start := time.Now()
	res, err := m.Run(ctx, []string{"/bin/sh", "-c", `trap 'echo term; exit 3' TERM; echo up; while :; do sleep 0.05; done`}, Options{
		Stdout: out, Stderr: io.Discard, Stdin: strings.NewReader(""), Home: dir, Cwd: dir,
	})
	if err != nil || res.ExitCode != 3 || out.String() != "up\nterm\n" {
		t.Errorf("%v %+v %q after %v", err, res, out.String(), time.Since(start))
	}
}

// cancelOn keeps what is written, and calls cancel once it holds word.
type cancelOn struct {
	mu     sync.Mutex
	b      strings.Builder
	word   string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Write(p)
	if strings.Contains(c.b.String(), c.word) {
		c.cancel()
	}
	return len(p), nil
}

func (c *cancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// TestAskEndsWithTheRun: a SOCKS connection waiting for the ask callback
// does not outlive its run: the callback's context ends with it.
func TestAskEndsWithTheRun(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	asked := make(chan struct{})
	ended := make(chan error, 1)
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{
		Ask: func(ctx context.Context, host string, port int) (bool, string, error) {
			close(asked)
			<-ctx.Done()
			ended <- ctx.Err()
			return true, "", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The command starts a SOCKS request in the background and leaves
	// once the callback has been asked (the request is still pending).
	script := `T=$(echo "$HTTP_PROXY" | sed 's/.*:\(.*\)@.*/\1/'); curl -s --socks5-hostname localhost:1080 -U "srt:$T" http://ask.test/ >/dev/null & read x`
	pr, pw := io.Pipe()
	go func() { <-asked; pw.Write([]byte("go\n")); pw.Close() }()
	dir := t.TempDir()
	if _, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{Stdin: pr, Stdout: io.Discard, Stderr: io.Discard, Home: dir, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the callback's context ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ask callback still waits after its run ended")
	}
}

// TestAuditRunRecords: a Manager with an audit log writes a start and an
// exit record for every run, around the run's decisions; the exit record
// has the status the run ended with. A dry run writes nothing, and no
// run starts once the log cannot be written.
func TestAuditRunRecords(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	var audit bytes.Buffer
	p := compile(t, `"allowedDomains": [], "deniedDomains": ["evil.test"]`)
	m, err := NewManager(p, ManagerOptions{Audit: &audit})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Stdout: io.Discard, Stderr: io.Discard, Stdin: strings.NewReader(""), Home: dir, Cwd: dir}
	for _, status := range []int{3, 0} {
		script := fmt.Sprintf("curl -s -o /dev/null http://evil.test/; exit %d", status)
		if res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o); err != nil || res.ExitCode != status {
			t.Fatalf("exit %d: %v %+v", status, err, res)
		}
	}
	dry := o
	dry.DryRun = true
	if _, err := m.Run(context.Background(), []string{"true"}, dry); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(audit.String(), "\n"), "\n") {
		var r struct {
			violations.RunRecord
			Host string
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch {
		case r.Event == "":
			got = append(got, "decision "+r.Host)
		case r.PID != os.Getpid() || r.UID != os.Getuid() || r.User == "" || r.Cwd != dir || r.Settings != "settings.json" ||
			r.SettingsSHA256 != p.SourceSHA256 || r.Program != "sh" || r.Args != 2 || r.Time.IsZero():
			t.Errorf("run record %s", l)
		case r.ExitStatus != nil:
			got = append(got, fmt.Sprintf("%s %d", r.Event, *r.ExitStatus))
		default:
			got = append(got, r.Event)
		}
	}
	if want := "start, decision evil.test, exit 3, start, decision evil.test, exit 0"; strings.Join(got, ", ") != want {
		t.Errorf("audit log: %s\nwant %s\n%s", strings.Join(got, ", "), want, &audit)
	}
	broken := errors.New("disk full")
	m, err = NewManager(p, ManagerOptions{Audit: writerFunc(func([]byte) (int, error) { return 0, broken })})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(context.Background(), []string{"/bin/sh", "-c", "echo ran"}, o); !errors.Is(err, broken) || !errors.Is(m.AuditErr(), broken) {
		t.Errorf("a run with an audit log it cannot write: %v, AuditErr %v; want both %v", err, m.AuditErr(), broken)
	}
}
