//go:build linux

package main

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/internal/buildversion"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/proxy/decider"
)

func TestProxyArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give one of --listen HOST:PORT and --listen-fd N"},
		{[]string{"--listen", "127.0.0.1:0", "--listen-fd", "3", "--decider-fd", "4"}, "give one of --listen"},
		{[]string{"--listen", "127.0.0.1:0"}, "give --decider-fd N (a socket), or both"},
		{[]string{"--listen", "127.0.0.1:0", "--decider-in", "3"}, "give --decider-fd N (a socket), or both"},
		{[]string{"--listen", "127.0.0.1:0", "--decider-fd", "3", "--decider-in", "4", "--decider-out", "5"}, "not both"},
		{[]string{"--listen-fd", "x", "--decider-fd", "4"}, `--listen-fd must be a file descriptor number, not "x"`},
		{[]string{"--listen-fd", "-1", "--decider-fd", "4"}, "--listen-fd must be a file descriptor number"},
		{[]string{"--listen-fd", "3", "--decider-fd", "4", "--bogus"}, `unknown argument "--bogus"`},
		{[]string{"--listen-fd", "3", "--decider-fd"}, "--decider-fd needs a value"},
		{[]string{"--listen-fd", "3", "--decider-fd", "4", "--debug=yes"}, "--debug takes no value"},
		{[]string{"--listen-fd", "3", "--decider-fd", "4", "--listen-any-interface"}, "--listen-any-interface goes with --listen"},
		{[]string{"--listen", "0.0.0.0:0", "--decider-fd", "4"}, "is not a loopback address"},
	} {
		t.Setenv("SRT_PROXY_REPORT_RSS_MS", "")
		var out, errb bytes.Buffer
		code := run(append([]string{"proxy"}, tc.args...), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("srt proxy %q = exit %d, %q; want exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	t.Setenv("SRT_PROXY_REPORT_RSS_MS", "soon")
	var out, errb bytes.Buffer
	if code := run([]string{"proxy", "--listen-fd", "3", "--decider-fd", "4"}, nil, &out, &errb); code != 2 {
		t.Errorf("bad SRT_PROXY_REPORT_RSS_MS = exit %d %q", code, errb.String())
	}
	t.Setenv("SRT_PROXY_REPORT_RSS_MS", "")
	errb.Reset()
	code := run([]string{"proxy", "--listen", "0.0.0.0:0", "--listen-any-interface", "--decider-fd", "99"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "warning: listening on 0.0.0.0:") || !strings.Contains(errb.String(), "--decider-fd 99 is not a socket") {
		t.Errorf("--listen-any-interface with a closed decider fd = exit %d, %q", code, errb.String())
	}
	// --version prints the version and does nothing else, whatever else
	// the command line holds.
	for _, args := range [][]string{
		{"--version"},
		{"--version", "--bogus"},
		{"--listen", "0.0.0.0:0", "--decider-fd", "99", "--version"},
		{"--debug=yes", "--version"},
		{"--listen-fd", "x", "--version", "--help"},
		{"--help", "--version"},
	} {
		out.Reset()
		errb.Reset()
		code := run(append([]string{"proxy"}, args...), nil, &out, &errb)
		if code != 0 || out.String() != "srt-proxy "+buildversion.Version(version)+"\n" || errb.Len() != 0 {
			t.Errorf("srt proxy %q = %d %q %q", args, code, out.String(), errb.String())
		}
	}
}

// proxyRun is srt proxy started as a process, with a test decider at the
// other end of its --decider-fd.
type proxyRun struct {
	cmd      *exec.Cmd
	addr     string
	decider  net.Conn
	lifeline *os.File
	stderr   *bytes.Buffer
	exited   chan error
}

// startProxy runs srt proxy with a listener on descriptor 3, the decider
// socket on 4, the lifeline on 5 and, when ca is set, the CA on 6; it
// answers the hello with hello ("": not at all) and leaves the rest to
// the caller.
func startProxy(t *testing.T, hello string, ca *proxy.CA, env ...string) *proxyRun {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "decider"), os.NewFile(uintptr(fds[1]), "proxy")
	dc, err := net.FileConn(ours)
	if err != nil {
		t.Fatal(err)
	}
	ours.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	files := []*os.File{lf, theirs, lifeR}
	args := []string{"proxy", "--listen-fd", "3", "--decider-fd", "4", "--lifeline-fd", "5", "--strip-response-header", "x_secret"}
	if ca != nil {
		caFile := filepath.Join(t.TempDir(), "ca.pem")
		der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, caFile, append(ca.PEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})...), 0o600)
		f, err := os.Open(caFile)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		args = append(args, "--ca-fd", "6")
	}
	cmd := exec.Command(srtBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = files
	p := &proxyRun{cmd: cmd, decider: dc, lifeline: lifeW, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	p.addr = l.Addr().String()
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Close()
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); dc.Close(); lifeW.Close() })
	dc.SetDeadline(time.Now().Add(30 * time.Second))
	if b, err := decider.ReadFrame(dc, decider.MaxFrame); err != nil || string(b) != `{"t":"hello","proto":1}` {
		t.Fatalf("proxy hello = %q, %v (stderr %s)", b, err, p.stderr)
	}
	if hello != "" {
		decider.WriteFrame(dc, []byte(hello))
	}
	return p
}

// answer replies to each req frame with verdict(req) until the link ends.
func (p *proxyRun) answer(verdict func(decider.Req) string) {
	go func() {
		for {
			b, err := decider.ReadFrame(p.decider, decider.MaxBodyFrame)
			if err != nil {
				return
			}
			r, _ := decider.ParseReq(b)
			decider.WriteFrame(p.decider, []byte(verdict(r)))
		}
	}()
}

func (p *proxyRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		t.Fatalf("srt proxy did not exit; stderr:\n%s", p.stderr)
	}
	return -1
}

func curl(t *testing.T, args ...string) (string, error) {
	out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "20"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestProxyDecider runs srt proxy with a decider: a plain request is
// decided and forwarded, a CONNECT is terminated with the --ca-fd CA
// (curl trusts only that CA), and the proxy exits when its lifeline
// closes.
func TestProxyDecider(t *testing.T) {
	testenv.Require(t, "curl")
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Secret", "s")
		fmt.Fprintf(w, "%s %s x-added=%s", r.Method, r.RequestURI, r.Header.Get("X-Added"))
	}))
	defer up.Close()
	plain := httptest.NewServer(up.Config.Handler)
	defer plain.Close()
	dir := testDir(t)
	upPEM := filepath.Join(dir, "upstream.pem")
	testenv.WriteFile(t, upPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw}), 0o644)
	ca, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	caPEM := filepath.Join(dir, "ca.pem")
	testenv.WriteFile(t, caPEM, ca.PEM, 0o644)

	p := startProxy(t, `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"]}`, ca, "SSL_CERT_FILE="+upPEM)
	var frames []string
	p.answer(func(r decider.Req) string {
		b, _ := json.Marshal(r)
		frames = append(frames, string(b))
		if r.Path == "/no" {
			return fmt.Sprintf(`{"t":"verdict","id":%d,"action":"deny","status":451,"reason":"not here"}`, r.ID)
		}
		return fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow","setHeaders":{"x-added":"yes"}}`, r.ID)
	})
	out, err := curl(t, "--cacert", caPEM, "-x", "http://"+p.addr, up.URL+"/ok?x=1", "-D", "-")
	if err != nil || !strings.Contains(out, "GET /ok?x=1 x-added=yes") || strings.Contains(strings.ToLower(out), "x-secret") {
		t.Fatalf("curl through a terminated CONNECT = %v\n%s\nstderr:\n%s", err, out, p.stderr)
	}
	out, _ = curl(t, "-x", "http://"+p.addr, plain.URL+"/no", "-D", "-")
	if !strings.Contains(out, "451 Unavailable For Legal Reasons") || !strings.Contains(out, "X-Deny-Reason: decider") || !strings.HasSuffix(out, "not here\n") {
		t.Errorf("decider deny = %q", out)
	}
	out, _ = curl(t, "-x", "http://"+p.addr, "http://evil.example/", "-D", "-")
	if !strings.Contains(out, "403 Forbidden") || !strings.Contains(out, "X-Deny-Reason: host_not_allowed") {
		t.Errorf("host outside the lists = %q", out)
	}
	if len(frames) < 1 || !strings.Contains(frames[0], `"sni"`) && !strings.Contains(frames[0], `"path":"/ok","query":"x=1"`) {
		t.Errorf("frames = %q", frames)
	}
	p.lifeline.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit after the lifeline closed = %d; stderr:\n%s", code, p.stderr)
	}
}

// TestProxyDeciderBroken: without --ca-fd a CONNECT is refused; a
// decider that breaks the protocol gets the request a 503 and the proxy
// exits 1.
func TestProxyDeciderBroken(t *testing.T) {
	testenv.Require(t, "curl")
	p := startProxy(t, `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"]}`, nil)
	out, err := curl(t, "-x", "http://"+p.addr, "https://127.0.0.1:1/")
	if err == nil || !strings.Contains(out, "CONNECT tunnel failed, response 403") {
		t.Errorf("CONNECT without a CA = %v %q", err, out)
	}
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
	b, _ := io.ReadAll(c)
	if want := "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Deny-Reason: opaque_tunnel\r\n\r\nthis proxy does not tunnel CONNECTs it cannot inspect"; string(b) != want {
		t.Errorf("CONNECT without a CA = %q, want %q", b, want)
	}
	p.answer(func(r decider.Req) string {
		return fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow","x":null}`, r.ID)
	})
	out, _ = curl(t, "-x", "http://"+p.addr, "http://127.0.0.1:1/", "-D", "-")
	if !strings.Contains(out, "503 Service Unavailable") || !strings.Contains(out, "X-Deny-Reason: decider_unavailable") {
		t.Errorf("with a broken decider = %q", out)
	}
	if code := p.wait(t); code != 1 || !regexp.MustCompile(`srt proxy: decider: .*null`).MatchString(p.stderr.String()) {
		t.Errorf("exit = %d; stderr:\n%s", code, p.stderr)
	}
}

// lenientServer reads a path as lenient servers do: decoded (net/http
// decodes once; an application behind a decoding front decodes again),
// backslashes as slashes (IIS), ;parameters dropped (Tomcat), dot
// segments and runs of slashes resolved (nginx, path.Clean).
func lenientServer(r *http.Request) string {
	p := r.URL.Path
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	p = strings.ReplaceAll(p, `\`, "/")
	p = regexp.MustCompile(`;[^/]*`).ReplaceAllString(p, "")
	return path.Clean(p)
}

// TestProxyExampleDecider builds examples/decider and runs it as the
// documentation shows: it starts srt proxy, and curl goes through. The
// spellings of a denied path that servers read as that path are denied
// too: sent directly, each reaches the upstream's /admin (the control);
// through the decider, none does.
func TestProxyExampleDecider(t *testing.T) {
	testenv.Require(t, "curl")
	bin := binDir
	dec := filepath.Join(t.TempDir(), "decider")
	if out, err := exec.Command("go", "build", "-o", dec, "srt.dev/examples/decider").CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	var mu sync.Mutex
	var reached []string // the paths that reached /admin through the proxy
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := lenientServer(r)
		if via := r.Header.Get("X-Proxied-By"); via != "" && strings.HasPrefix(p, "/admin") {
			mu.Lock()
			reached = append(reached, r.RequestURI)
			mu.Unlock()
		}
		fmt.Fprintf(w, "%s via=%s\n", p, r.Header.Get("X-Proxied-By"))
	}))
	defer up.Close()
	cmd := exec.Command(dec, "-srt", filepath.Join(bin, "srt"), "-listen", "127.0.0.1:0",
		"-allow", "127.0.0.1", "-deny-path", "/admin", "-header", "x-proxied-by=decider", "--", "--plaintext-header-set")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stderr)
	var addr string
	for addr == "" && lines.Scan() {
		addr, _ = strings.CutPrefix(lines.Text(), "srt-proxy: listening on ")
	}
	go io.Copy(io.Discard, stderr)
	if addr == "" {
		t.Fatal("srt proxy did not say where it listens")
	}
	if out, err := curl(t, "-x", "http://"+addr, up.URL+"/hello"); err != nil || out != "/hello via=decider\n" {
		t.Errorf("allowed = %v %q", err, out)
	}
	if out, _ := curl(t, "-x", "http://"+addr, up.URL+"/admin/x", "-D", "-"); !strings.Contains(out, " 403 ") || !strings.Contains(out, "refused by the example decider") {
		t.Errorf("denied path = %q", out)
	}
	if out, _ := curl(t, "-x", "http://"+addr, "http://example.com/", "-D", "-"); !strings.Contains(out, "X-Deny-Reason: host_not_allowed") {
		t.Errorf("host not allowed = %q", out)
	}
	for _, tt := range []struct {
		path   string
		status string
	}{
		{"/./admin", "403"},
		{"/x/../admin", "403"},
		{"/%61dmin", "403"},
		{"/%2e%2e/admin", "403"},
		{"/.//admin", "403"},
		{"/x/..%2Fadmin", "403"},
		{"/%2561dmin", "403"},
		{`/x\..\admin`, "403"},
		{"/x/..;/admin", "403"},
		{"/admin;jsessionid=1", "403"},
		{"//admin", "400"}, // srt proxy refuses a path that starts with //
	} {
		if out, err := curl(t, "--path-as-is", up.URL+tt.path); err != nil || !strings.HasPrefix(out, "/admin via=\n") {
			t.Errorf("control: %s sent directly reaches %q, want /admin", tt.path, out)
		}
		out, _ := curl(t, "--path-as-is", "-x", "http://"+addr, up.URL+tt.path, "-D", "-")
		if !strings.HasPrefix(out, "HTTP/1.1 "+tt.status+" ") || tt.status == "403" && !strings.Contains(out, "refused by the example decider") {
			t.Errorf("%s through the decider = %q, want %s", tt.path, out, tt.status)
		}
	}
	if out, err := curl(t, "--path-as-is", "-x", "http://"+addr, up.URL+"/ADMIN"); err != nil || out != "/ADMIN via=decider\n" {
		t.Errorf("/ADMIN (paths are case-sensitive) = %v %q", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reached) > 0 {
		t.Errorf("reached /admin through the decider: %q", reached)
	}
}

// TestProxyDeciderPipes runs srt proxy with --listen and the decider on a
// pair of pipes (--decider-in, --decider-out), and RSS reports on.
func TestProxyDeciderPipes(t *testing.T) {
	testenv.Require(t, "curl")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up") }))
	defer up.Close()
	toProxyR, toProxyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromProxyR, fromProxyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(srtBin, "proxy", "--listen", "127.0.0.1:0", "--decider-in", "3", "--decider-out", "4")
	cmd.Env = append(os.Environ(), "SRT_PROXY_REPORT_RSS_MS=20")
	cmd.ExtraFiles = []*os.File{toProxyR, fromProxyW}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toProxyR.Close()
	fromProxyW.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if b, err := decider.ReadFrame(fromProxyR, decider.MaxFrame); err != nil || string(b) != `{"t":"hello","proto":1}` {
		t.Fatalf("proxy hello = %q, %v", b, err)
	}
	decider.WriteFrame(toProxyW, []byte(`{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"]}`))
	go func() {
		for {
			b, err := decider.ReadFrame(fromProxyR, decider.MaxFrame)
			if err != nil {
				return
			}
			r, _ := decider.ParseReq(b)
			decider.WriteFrame(toProxyW, []byte(fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow"}`, r.ID)))
		}
	}()
	lines := bufio.NewScanner(stderr)
	var addr string
	rss := false
	for (addr == "" || !rss) && lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "srt-proxy: listening on "); ok {
			addr = a
		}
		rss = rss || regexp.MustCompile(`^srt-proxy rss [1-9][0-9]*$`).MatchString(lines.Text())
	}
	go io.Copy(io.Discard, stderr)
	if out, err := curl(t, "-x", "http://"+addr, up.URL+"/"); err != nil || out != "up" {
		t.Errorf("through srt proxy = %v %q", err, out)
	}
	// The decider goes: the proxy exits 1.
	toProxyW.Close()
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("exit after the decider closed = %v", err)
	}
}

// TestProxyLifelineBeforeHello: the proxy waiting for a decider that
// never says hello still exits when its lifeline closes.
func TestProxyLifelineBeforeHello(t *testing.T) {
	p := startProxy(t, "", nil)
	p.lifeline.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit = %d; stderr:\n%s", code, p.stderr)
	}
}

// TestProxyJoinsItsGoroutines: srt proxy, run in process, returns when
// its lifeline closes only once the goroutines it started have: the
// lifeline's reader, the rss reporter, the reader of the decider's hello
// (before the hello, blocked on an inherited pipe), the server. The
// decider link's own reader and writers are not counted.
func TestProxyJoinsItsGoroutines(t *testing.T) {
	t.Setenv("SRT_PROXY_REPORT_RSS_MS", "5")
	pipe := func() (r, w *os.File) {
		var p [2]int
		if err := unix.Pipe(p[:]); err != nil { // blocking, as a pipe a process inherits
			t.Fatal(err)
		}
		r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	fd := func(f *os.File) string { return strconv.Itoa(int(f.Fd())) }
	for _, hello := range []bool{false, true} {
		lifeR, lifeW := pipe()
		inR, inW := pipe()   // the decider's frames
		outR, outW := pipe() // the proxy's
		// srt proxy makes an *os.File of --decider-out, whose finalizer
		// closes the descriptor: it gets a copy of its own.
		outFD, err := unix.Dup(int(outW.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		outW.Close()
		var stderr testenv.SyncBuffer
		done := make(chan int, 1)
		args := []string{"proxy", "--listen", "127.0.0.1:0", "--decider-in", fd(inR), "--decider-out", strconv.Itoa(outFD), "--lifeline-fd", fd(lifeR)}
		go func() { done <- run(args, nil, io.Discard, &stderr) }()
		if b, err := decider.ReadFrame(outR, decider.MaxFrame); err != nil || string(b) != `{"t":"hello","proto":1}` {
			t.Fatalf("proxy hello = %q, %v", b, err)
		}
		if hello {
			decider.WriteFrame(inW, []byte(`{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"]}`))
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "listening on"); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("srt proxy did not listen: %s", stderr.String())
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // an rss line or more
		lifeW.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("hello %v: exit %d\n%s", hello, code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("hello %v: srt proxy did not end with its lifeline", hello)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		// Frames, not the "created by" lines: the link's reader is
		// created by decider.Open.
		for _, f := range []string{"srt.serveProxy", "watchLifeline", "reportRSS", "decider.Open(", "(*HTTP).Serve("} {
			if strings.Contains(stacks, f) {
				t.Errorf("hello %v: a goroutine in %s outlives srt proxy:\n%s", hello, f, stacks)
			}
		}
	}
}
