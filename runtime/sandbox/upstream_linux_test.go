//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"log/slog"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/proxy"
)

// origin is the last hop of the upstream tests: it answers an
// absolute-form request itself, and a CONNECT with 200 and then one request
// inside the tunnel, each answer naming what it saw (the Via header shows
// which proxy the request came through).
type origin struct {
	mu   sync.Mutex
	seen []string
	addr string
}

func startOrigin(t *testing.T, network, addr string) *origin {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	o := &origin{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go o.handle(c)
		}
	}()
	return o
}

func (o *origin) log() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

func (o *origin) handle(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	via := req.Header.Get("Via")
	if i := strings.Index(via, "("); i >= 0 {
		via = via[i:] // "(tinyproxy/1.11.1)", without the host name
	}
	line := fmt.Sprintf("%s %s via=%s", req.Method, req.RequestURI, via)
	o.mu.Lock()
	o.seen = append(o.seen, line)
	o.mu.Unlock()
	if req.Method == http.MethodConnect {
		fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		inner, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		line += " inside: " + inner.Method + " " + inner.RequestURI
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(line), line)
}

// freePort returns a loopback port nothing listens on (for a program that
// cannot be handed a listener).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startTinyproxy runs Debian's tinyproxy on a loopback port, with
// BasicAuth user:pass, forwarding everything to the upstream proxy
// upstream (so that no name is ever resolved); it returns its address.
func startTinyproxy(t *testing.T, bin, upstream, user, pass string) string {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	conf := fmt.Sprintf(`Port %d
Listen 127.0.0.1
Timeout 30
MaxClients 20
LogLevel Connect
LogFile "%s/tinyproxy.log"
PidFile "%s/tinyproxy.pid"
Upstream http %s
BasicAuth %s %s
`, port, dir, dir, upstream, user, pass)
	path := filepath.Join(dir, "tinyproxy.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-c", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if i == 100 {
			log, _ := os.ReadFile(filepath.Join(dir, "tinyproxy.log"))
			t.Fatalf("tinyproxy did not listen on %s: %v\n%s\n%s", addr, err, out.String(), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestParentProxyTinyproxy: curl inside the sandbox, through srt, through
// a real parent proxy (tinyproxy, with proxy authentication) to a
// loopback server: plain HTTP, a CONNECT tunnel and SOCKS; a NO_PROXY
// name goes direct; wrong parent credentials fail the request.
func TestParentProxyTinyproxy(t *testing.T) {
	bins := testenv.Require(t, "bwrap", "curl", "tinyproxy")
	up := startOrigin(t, "tcp4", "127.0.0.1:0")
	tp := startTinyproxy(t, bins[2], up.addr, "corp", "s3cret")
	noEnv := func(string) string { return "" }
	settings := func(cred string) string {
		return `"allowedDomains": ["*.corp.example", "direct.example"], "deniedDomains": ["evil.corp.example"],
			"parentProxy": {"http": "http://` + cred + `@` + tp + `", "noProxy": "direct.example"}`
	}
	m, err := NewManager(compile(t, settings("corp:s3cret")), ManagerOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	code := ` -s -o /dev/null -w "%{http_code}\n" `
	script := `curl -s http://app.corp.example/plain; echo
curl -s -p http://app.corp.example:8443/tunnel; echo
curl -s --noproxy "" -x "$FTP_PROXY" http://db.corp.example:5432/socks; echo
curl` + code + `http://direct.example/
curl` + code + `http://evil.corp.example/
`
	out, res := sh(t, m, Options{}, script)
	want := strings.Join([]string{
		"GET http://app.corp.example:80/plain via=(tinyproxy/V)",
		"CONNECT app.corp.example:8443 via=(tinyproxy/V) inside: GET /tunnel",
		"CONNECT db.corp.example:5432 via=(tinyproxy/V) inside: GET /socks",
		"502", // NO_PROXY: srt dials it itself, and the name does not resolve
		"403",
	}, "\n") + "\n"
	// tinyproxy's version is not the test's business.
	norm := func(s string) string { return tinyproxyVersion.ReplaceAllString(s, "tinyproxy/V") }
	if norm(out) != norm(want) {
		t.Errorf("through tinyproxy:\n%s\nwant:\n%s", out, want)
	}
	if got := len(up.log()); got != 3 {
		t.Errorf("the origin saw %d requests, want 3 (NO_PROXY and denied hosts never reach the parent): %q", got, up.log())
	}
	if got := lines(res.Violations); len(got) != 1 || !strings.Contains(got[0], "evil.corp.example:80") {
		t.Errorf("violations: %q", got)
	}

	// Wrong parent credentials: tinyproxy refuses; a plain request gets
	// its refusal (tinyproxy says 401 to wrong credentials, 407 to none),
	// a tunnel fails.
	bad, err := NewManager(compile(t, settings("corp:wrong")), ManagerOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = sh(t, bad, Options{}, `curl`+code+`http://app.corp.example/plain
curl -s -p http://app.corp.example:8443/tunnel; echo "exit $?"
`)
	if out != "401\nexit 56\n" && out != "407\nexit 56\n" {
		t.Errorf("wrong credentials: %q", out)
	}
	if got := len(up.log()); got != 3 {
		t.Errorf("requests with wrong credentials reached the origin: %q", up.log())
	}

	// The parent from srt's own environment, when the settings name none.
	env := map[string]string{"http_proxy": "http://corp:s3cret@" + tp, "NO_PROXY": "direct.example"}
	fromEnv, err := NewManager(compile(t, `"allowedDomains": ["*.corp.example", "direct.example"], "deniedDomains": []`),
		ManagerOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = sh(t, fromEnv, Options{}, `curl -s http://env.corp.example/e; echo
curl`+code+`http://direct.example/
`)
	if want := "GET http://env.corp.example:80/e via=(tinyproxy/V)\n502\n"; norm(out) != want {
		t.Errorf("parent from the environment: %q, want %q", out, want)
	}
}

var tinyproxyVersion = regexp.MustCompile(`tinyproxy/[0-9.]+`)

// TestMitmProxySocket: the mitmProxy domains reach a test proxy on a Unix
// socket from inside the sandbox (CONNECT, and plain HTTP in absolute
// form), after srt's lists; a live update moves the domains; when the
// socket is gone the client gets 502, with no fallback.
func TestMitmProxySocket(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	sock := filepath.Join(t.TempDir(), "mitm.sock")
	mitm := startOrigin(t, "unix", sock)
	settings := func(domain, sock string) string {
		return `"allowedDomains": ["*.inspect.example", "other.example"], "deniedDomains": ["evil.inspect.example"],
			"mitmProxy": {"socketPath": "` + sock + `", "domains": ["` + domain + `"]}`
	}
	m, err := NewManager(compile(t, settings("*.inspect.example", sock)), ManagerOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	code := `curl -s -o /dev/null -w "%{http_code}\n" `
	out, _ := sh(t, m, Options{}, `curl -s http://a.inspect.example/p; echo
curl -s -p http://b.inspect.example:8443/t; echo
`+code+`http://evil.inspect.example/
`+code+`http://other.example/
`)
	want := "GET http://a.inspect.example/p via=\nCONNECT b.inspect.example:8443 via= inside: GET /t\n403\n502\n"
	if out != want {
		t.Errorf("mitm:\n%s\nwant:\n%s", out, want)
	}
	// A live update: now other.example goes to the socket (a change a
	// running sandbox takes).
	next := compile(t, settings("other.example", sock))
	if FixedPartsDiffer(m.Policy(), next) {
		t.Error("a mitmProxy change is reported as one a running sandbox cannot take")
	}
	if err := m.Update(next); err != nil {
		t.Fatal(err)
	}
	out, _ = sh(t, m, Options{}, `curl -s http://other.example/o; echo
`+code+`http://a.inspect.example/
`)
	if want := "GET http://other.example/o via=\n502\n"; out != want {
		t.Errorf("after the update:\n%s\nwant:\n%s", out, want)
	}
	if n := len(mitm.log()); n != 3 {
		t.Errorf("the mitm proxy saw %d requests, want 3: %q", n, mitm.log())
	}
	// The socket is gone: no fallback to a direct dial.
	if err := m.Update(compile(t, settings("other.example", sock+".gone"))); err != nil {
		t.Fatal(err)
	}
	out, _ = sh(t, m, Options{}, code+`http://other.example/
curl -s -p http://other.example:8443/t; echo "exit $?"
`)
	if out != "502\nexit 56\n" {
		t.Errorf("socket gone: %q", out)
	}
}

// TestExternalProxyPorts: with httpProxyPort and socksProxyPort, the
// command's proxy listeners relay to the user's proxies on those host
// loopback ports, without srt's credentials or rules; another host
// loopback port stays unreachable; --debug says what does not apply.
func TestExternalProxyPorts(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	// The user's HTTP proxy (the test origin answers absolute-form
	// requests and CONNECT itself) and SOCKS proxy (srt's own, without a
	// token, allowing the origin only).
	httpProxy := startOrigin(t, "tcp4", "127.0.0.1:0")
	target := startOrigin(t, "tcp4", "127.0.0.1:0")
	allowed, err := policy.ParseHostList([]string{target.addr})
	if err != nil {
		t.Fatal(err)
	}
	rules := &netpolicy.Rules{Allowed: allowed}
	sl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.Close() })
	go (&proxy.SOCKS{Egress: &proxy.Egress{Rules: func() *netpolicy.Rules { return rules }}}).Serve(context.Background(), sl)
	// A host port nothing in the sandbox may reach.
	other := startOrigin(t, "tcp4", "127.0.0.1:0")
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

	var debug testenv.SyncBuffer
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": [], "httpProxyPort": `+port(httpProxy.addr)+`, "socksProxyPort": `+port(sl.Addr().String())), ManagerOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	out, res := sh(t, m, Options{Log: slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))}, `echo "$HTTP_PROXY $FTP_PROXY ${GIT_CONFIG_PARAMETERS-none} ${CLOUDSDK_PROXY_PASSWORD-none}"
curl -s http://anything.example/h; echo
curl -s -p http://anything.example:8443/t; echo
curl -s --noproxy "" -x "$FTP_PROXY" http://`+target.addr+`/s; echo
curl -s --noproxy "" -x "$FTP_PROXY" -o /dev/null -w "%{http_code}\n" http://`+other.addr+`/; echo "exit $?"
curl -s --noproxy '*' -o /dev/null http://`+other.addr+`/; echo "exit $?"
`)
	want := strings.Join([]string{
		"http://localhost:3128 socks5h://localhost:1080 none none",
		"GET http://anything.example/h via=",
		"CONNECT anything.example:8443 via= inside: GET /t",
		"GET /s via=",
		"000", "exit 97", // the user's SOCKS proxy refuses what it does not allow
		"exit 7", // the sandbox's own loopback: nothing listens there
	}, "\n") + "\n"
	if out != want {
		t.Errorf("external proxies:\n%s\nwant:\n%s", out, want)
	}
	if len(other.log()) != 0 {
		t.Errorf("the other host port was reached: %q", other.log())
	}
	if len(res.Violations) != 0 {
		t.Errorf("srt recorded violations for traffic it does not filter: %q", lines(res.Violations))
	}
	for _, key := range []string{"network.httpProxyPort", "network.socksProxyPort"} {
		if !strings.Contains(debug.String(), key+" ") || !strings.Contains(debug.String(), "per-command lists and the ask callback do not apply") {
			t.Errorf("the debug log does not say what %s means:\n%s", key, debug.String())
		}
	}

	// Only httpProxyPort: SOCKS stays srt's, with its token and its rules.
	half, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": [], "httpProxyPort": `+port(httpProxy.addr)), ManagerOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	out, res = sh(t, half, Options{}, `case "$FTP_PROXY" in socks5h://srt.*:*@localhost:1080) echo srt-socks;; *) echo "$FTP_PROXY";; esac
curl -s http://anything.example/h; echo
curl -s --noproxy "" -x "$FTP_PROXY" -o /dev/null http://`+target.addr+`/; echo "exit $?"
`)
	if want := "srt-socks\nGET http://anything.example/h via=\nexit 97\n"; out != want {
		t.Errorf("httpProxyPort only:\n%s\nwant:\n%s", out, want)
	}
	if got := lines(res.Violations); len(got) != 1 || !strings.Contains(got[0], target.addr) {
		t.Errorf("srt's SOCKS proxy must still refuse: %q", got)
	}
}
