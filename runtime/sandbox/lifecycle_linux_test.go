//go:build linux

package sandbox

import (
	"context"
	"io"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// TestRunsLeaveNothing runs sandboxes one after the other in one
// Manager, each leaving a tunnel open when its command ends: a CONNECT
// and a SOCKS tunnel to a server that never closes its side. When Run
// returns, every goroutine and descriptor of the run's proxies is gone
// (a program that runs many sandboxes must not accumulate them), and the
// server has seen its connections closed.
func TestRunsLeaveNothing(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	runs := 20
	if testing.Short() {
		runs = 5
	}
	// The server reads until the proxy closes its side, and keeps its own
	// open: only the proxy can end the tunnel.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var conns []net.Conn
	opened, ended := 0, 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			opened++
			mu.Unlock()
			go func() {
				io.Copy(io.Discard, c)
				mu.Lock()
				ended++
				mu.Unlock()
			}()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	addr := l.Addr().String()
	m, err := NewManager(compile(t, `"allowedDomains": ["`+addr+`"], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// curl opens the tunnel, sends a request and gives up on the answer.
	script := `curl -s --noproxy "" -p --max-time 0.3 http://` + addr + `/ ; ` +
		`curl -s --noproxy "" -x "$FTP_PROXY" --max-time 0.3 http://` + addr + `/ ; exit 0`
	run := func() {
		var out strings.Builder
		dir := t.TempDir()
		res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{
			Home: dir, Cwd: dir, Stdout: &out, Stderr: &out, Stdin: strings.NewReader(""),
			Env: []string{"PATH=" + os.Getenv("PATH")}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %v %v %s", err, res, out.String())
		}
	}
	serverConns := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
	run()
	g0, f0 := counts(serverConns())
	for range runs {
		run()
	}
	// Run returns once its proxies' handlers have; what is left of
	// net/http's goroutines, and of the run's children, goes within
	// moments.
	g, f := counts(serverConns())
	for deadline := time.Now().Add(5 * time.Second); (g > g0 || f > f0) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		g, f = counts(serverConns())
	}
	mu.Lock()
	o, e := opened, ended
	mu.Unlock()
	t.Logf("%d runs: goroutines %d → %d, descriptors %d → %d, server connections opened %d, closed by the proxy %d", runs, g0, g, f0, f, o, e)
	if o != 2*(runs+1) {
		t.Errorf("the server saw %d connections, want %d", o, 2*(runs+1))
	}
	if g > g0 || f > f0 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines %d → %d, descriptors %d → %d; goroutines:\n%s", g0, g, f0, f, buf[:runtime.Stack(buf, true)])
	}
	// The server's readers end as the proxy's closes reach them.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		e = ended
		mu.Unlock()
		if e == o || time.Now().After(deadline) {
			break
		}
	}
	if e != o {
		t.Errorf("the proxy closed %d of the server's %d connections", e, o)
	}
}

// counts returns the goroutines and the open descriptors of this
// process, the server's readers and connections left out, after a
// collection (the runtime's pool of splice pipes closes its pipes when
// collected).
func counts(server int) (goroutines, fds int) {
	runtime.GC()
	runtime.GC()
	entries, _ := os.ReadDir("/proc/self/fd")
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(stacks, "\n\n") {
		if !strings.Contains(g, "TestRunsLeaveNothing.func1.1") {
			goroutines++
		}
	}
	return goroutines, len(entries) - server
}

// TestRunEndsDespiteAsk: a run ends, and its proxies with it, even when
// the ask callback does not heed its context.
func TestRunEndsDespiteAsk(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	asked, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	var once sync.Once
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{
		Ask: func(context.Context, string, int) (bool, string, error) {
			once.Do(func() { close(asked) })
			<-release
			return true, "", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	script := `curl -s --noproxy "" http://ask.test/ >/dev/null & read x`
	pr, pw := io.Pipe()
	go func() { <-asked; pw.Write([]byte("go\n")); pw.Close() }()
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		_, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{Stdin: pr, Stdout: io.Discard, Stderr: io.Discard, Home: dir, Cwd: dir})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run waits for an ask callback that ignores its context")
	}
}

// TestRunJoinsItsGoroutines: when Run returns, every goroutine the run
// started has returned (the ask callback's aside: a callback that does
// not heed its context is the caller's), whether the command ran, was
// not found, or the run was a dry run; none waits for the reaper, which
// outlives srt by design.
func TestRunJoinsItsGoroutines(t *testing.T) {
	testenv.Require(t, "bwrap")
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		dry  bool
	}{
		{"ran", []string{"/bin/sh", "-c", "echo x > f; exit 3"}, false},
		{"not found", []string{"no-such-program"}, false},
		{"dry run", []string{"true"}, true},
	} {
		dir := t.TempDir()
		if _, err := m.Run(context.Background(), tc.argv, Options{Home: dir, Cwd: dir, Stdout: io.Discard, Stderr: io.Discard,
			Stdin: strings.NewReader(""), DryRun: tc.dry}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if inRuntime(g) || strings.Contains(g, "os/exec.(*Cmd).Wait") {
				t.Errorf("%s: a goroutine of the run outlives it:\n%s", tc.name, g)
			}
		}
	}
}

// inRuntime reports whether the stack of a goroutine has a frame of the
// runtime's code (srt.dev/runtime/..., in a file that is not a test).
func inRuntime(stack string) bool {
	lines := strings.Split(stack, "\n")
	for i, l := range lines[:len(lines)-1] {
		file := regexp.MustCompile(`\.go:\d+`).Split(strings.TrimSpace(lines[i+1]), 2)[0]
		if strings.HasPrefix(l, "srt.dev/runtime/") && !strings.HasSuffix(file, "_test") {
			return true
		}
	}
	return false
}
