//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/internal/testtls"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/proxy"
)

// upstream is an HTTPS server on loopback with a certificate for
// 127.0.0.1 and localhost signed by a CA of its own (in caFile, for
// extraCaCertPaths).
type upstream struct {
	port   string
	caFile string
	pin    string // curl --pinnedpubkey of its leaf key
	mu     sync.Mutex
	seen   []string // what each request carried: path, Authorization, body
}

func (u *upstream) requests() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.seen, "\n")
}

func newUpstream(t *testing.T, handler http.Handler) *upstream {
	t.Helper()
	u := &upstream{}
	if handler == nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			u.mu.Lock()
			u.seen = append(u.seen, fmt.Sprintf("%s auth=%q body=%q", r.URL.Path, r.Header.Get("Authorization"), body))
			u.mu.Unlock()
			if strings.HasSuffix(r.URL.Path, ".git/info/refs") || strings.Contains(r.URL.Path, ".git/") {
				http.NotFound(w, r)
				return
			}
			// Echo what the request carried: a secret that reached the
			// upstream comes back in the answer.
			fmt.Fprintf(w, "hello %s auth=%s body=%s\n", r.URL.Path, r.Header.Get("Authorization"), body)
		})
	}
	srv, err := testtls.Serve(handler)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	leaf, err := srv.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(leaf.Leaf.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	u.pin = "sha256//" + base64.StdEncoding.EncodeToString(sum[:])
	u.port = srv.Port
	u.caFile = filepath.Join(t.TempDir(), "upstream-ca.pem")
	if err := os.WriteFile(u.caFile, srv.CA.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return u
}

// runScript runs script with sh in a sandbox of settings and returns its
// stdout and stderr; env is added to the test's environment.
func runScript(t *testing.T, settings, script string, env ...string) (string, string, *Result, error) {
	t.Helper()
	return runScriptIn(t, t.TempDir(), settings, script, env...)
}

// runScriptIn is runScript with dir as the home and working directory.
func runScriptIn(t *testing.T, dir, settings, script string, env ...string) (string, string, *Result, error) {
	t.Helper()
	testenv.Require(t, "bwrap")
	p := compileFull(t, settings)
	m, err := NewManager(p, ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	o := Options{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Home: dir, Cwd: dir,
		Env: append(os.Environ(), env...)}
	res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
	return out.String(), errb.String(), res, err
}

func tlsSettings(t *testing.T, u *upstream, tlsOpts, extra string) string {
	if tlsOpts != "" {
		tlsOpts = ", " + tlsOpts
	}
	return `{"network": {"allowedDomains": ["127.0.0.1:` + u.port + `", "localhost:` + u.port + `"], "deniedDomains": [],
		"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(u.caFile) + `]` + tlsOpts + `}}` + extra + `,
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
}

// noProxyOff makes clients use the proxy for loopback upstreams, which
// NO_PROXY lists.
const noProxyOff = "export NO_PROXY= no_proxy=\n"

// TestTLSClientsTrustTheRun: curl, python3, node and git reach an HTTPS
// upstream through the terminating proxy with no TLS flag, the run's
// trust bundle in their environment; each sees a certificate of the run's
// CA, not the upstream's.
func TestTLSClientsTrustTheRun(t *testing.T) {
	testenv.Require(t, "bwrap", "curl", "python3", "node", "git")
	u := newUpstream(t, nil)
	// A repository for git's dumb HTTP protocol.
	repoRoot := t.TempDir()
	repo := filepath.Join(repoRoot, "repo.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", repo},
		{"-C", repo, "update-server-info"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	files := http.FileServer(http.Dir(repoRoot))
	u2 := newUpstream(t, files)
	// Served from a second upstream with its own CA, both CAs extra.
	settings := `{"network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": [],
		"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(u.caFile) + `, ` + strconv.Quote(u2.caFile) + `, "/nonexistent/ca.pem"]}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	url := "https://127.0.0.1:" + u.port
	script := noProxyOff + `
set -e
echo "bundle=$SSL_CERT_FILE node=$NODE_EXTRA_CA_CERTS req=$REQUESTS_CA_BUNDLE curl=$CURL_CA_BUNDLE git=$GIT_SSL_CAINFO"
test -r "$SSL_CERT_FILE"
if echo x >> "$SSL_CERT_FILE" 2>/dev/null; then echo "bundle writable"; fi
curl -sS -v ` + url + `/curl 2>&1 | grep -o -e 'issuer: .*' -e 'hello .*'

python3 -c '
import urllib.request
r = urllib.request.urlopen("` + url + `/python")
print("python issuer", dict(x[0] for x in r.fp.raw._sock.getpeercert()["issuer"])["organizationName"])
print(r.read().decode().strip())
'
node -e '
const http = require("http"), tls = require("tls");
const p = new URL(process.env.HTTPS_PROXY);
const auth = "Basic " + Buffer.from(decodeURIComponent(p.username) + ":" + decodeURIComponent(p.password)).toString("base64");
http.request({host: "127.0.0.1", port: p.port, method: "CONNECT", path: "127.0.0.1:` + u.port + `", headers: {"Proxy-Authorization": auth}}).on("connect", (res, sock) => {
  const s = tls.connect({socket: sock, host: "127.0.0.1"}, () => {
    console.log("node issuer", s.getPeerCertificate().issuer.O);
    s.write("GET /node HTTP/1.1\r\nHost: 127.0.0.1:` + u.port + `\r\nConnection: close\r\n\r\n");
  });
  let b = ""; s.on("data", d => b += d); s.on("end", () => console.log(b.split("\r\n\r\n")[1].trim()));
  s.on("error", e => { console.log("node error", e.message); process.exit(1); });
}).end();
'
GIT_CURL_VERBOSE=1 git ls-remote https://127.0.0.1:` + u2.port + `/repo.git 2>&1 | grep -o -e 'issuer: .*' -e 'HTTP/1.1 200' | sort -u
echo "git exit $?"
`
	out, errs, _, err := runScript(t, settings, script)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errs)
	}
	t.Logf("%s", out)
	for _, want := range []string{
		"hello /curl", "issuer: O=srt sandbox",
		"hello /python", "python issuer srt sandbox",
		"hello /node", "node issuer srt sandbox",
		"git exit 0", "HTTP/1.1 200",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s\nstderr: %s", want, out, errs)
		}
	}
	if strings.Contains(out, "bundle writable") {
		t.Errorf("the trust bundle is writable in the sandbox")
	}
	first := strings.SplitN(out, "\n", 2)[0]
	bundle := strings.TrimPrefix(strings.Fields(first)[0], "bundle=")
	if !strings.HasSuffix(bundle, credentials.BundleName) || strings.Count(first, bundle) != 5 {
		t.Errorf("the CA variables do not all name the bundle: %s", first)
	}
	if _, err := os.Stat(bundle); !os.IsNotExist(err) {
		t.Errorf("the trust bundle %s outlives the run (%v)", bundle, err)
	}
}

// TestTLSExcludedHostIsOpaque: a client that pins the upstream's key
// reaches an excluded host (an opaque tunnel), and fails on a terminated
// one.
func TestTLSExcludedHostIsOpaque(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	u := newUpstream(t, nil)
	pinned := noProxyOff + `curl -sS -k --pinnedpubkey '` + u.pin + `' https://127.0.0.1:` + u.port + `/pinned; echo "exit=$?"`
	out, errs, _, err := runScript(t, tlsSettings(t, u, `"excludeDomains": ["127.0.0.1"]`, ""), pinned)
	if err != nil || !strings.Contains(out, "hello /pinned") || !strings.Contains(out, "exit=0") {
		t.Errorf("excluded host: %v\n%s\n%s", err, out, errs)
	}
	// An IPv6 spelling of the address (the grammar's bare IPv6 literal)
	// excludes it too: the compiler wrote it canonically.
	out, errs, _, err = runScript(t, tlsSettings(t, u, `"excludeDomains": ["::ffff:127.0.0.1"]`, ""), pinned)
	if err != nil || !strings.Contains(out, "hello /pinned") || !strings.Contains(out, "exit=0") {
		t.Errorf("excluded by an IPv6 spelling: %v\n%s\n%s", err, out, errs)
	}
	out, errs, _, err = runScript(t, tlsSettings(t, u, `"excludeDomains": ["localhost"]`, ""), pinned)
	if err != nil || strings.Contains(out, "hello /pinned") || !strings.Contains(out, "exit=90") {
		t.Errorf("terminated host: a pinning client got through: %v\n%s\n%s", err, out, errs)
	}
}

// TestTLSMaxTunnels: with maxTunnels 1, a second CONNECT while a
// terminated tunnel is open is refused with 503 too-many-tunnels.
func TestTLSMaxTunnels(t *testing.T) {
	testenv.Require(t, "bwrap", "python3")
	u := newUpstream(t, nil)
	script := `python3 -c '
import base64, os, socket, ssl, urllib.parse
p = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
auth = base64.b64encode((urllib.parse.unquote(p.username) + ":" + urllib.parse.unquote(p.password)).encode()).decode()
def connect():
    s = socket.create_connection(("127.0.0.1", p.port))
    s.sendall(("CONNECT 127.0.0.1:` + u.port + ` HTTP/1.1\r\nHost: 127.0.0.1:` + u.port + `\r\nProxy-Authorization: Basic " + auth + "\r\n\r\n").encode())
    return s, s.recv(4096).decode()
a, ra = connect()
print("first", ra.split("\r\n")[0])
t = ssl.create_default_context().wrap_socket(a, server_hostname="127.0.0.1")
print("handshake", t.version())
b, rb = connect()
print("second", rb.replace("\r\n", "|"))
'`
	out, errs, _, err := runScript(t, tlsSettings(t, u, `"maxTunnels": 1`, ""), script)
	if err != nil {
		t.Fatalf("%v %s", err, errs)
	}
	for _, want := range []string{"first HTTP/1.1 200", "handshake TLS", "second HTTP/1.1 503 Service Unavailable", "X-Proxy-Error: too-many-tunnels", "too many TLS-terminated tunnels at once"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s\n%s", want, out, errs)
		}
	}
}

// TestTLSCAFileErrors: a CA that cannot be used stops the run before the
// command starts, naming the file and what to do.
func TestTLSCAFileErrors(t *testing.T) {
	testenv.Require(t, "bwrap")
	dir := t.TempDir()
	a, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	b, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	certA := filepath.Join(dir, "a.pem")
	testenv.WriteFile(t, certA, a.PEM, 0o644)
	keyB := filepath.Join(dir, "b.key")
	der, err := x509.MarshalPKCS8PrivateKey(b.Key)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, keyB, pemBlock("PRIVATE KEY", der), 0o600)
	marker := filepath.Join(dir, "ran")
	for _, c := range []struct{ cert, key, want string }{
		{filepath.Join(dir, "missing.pem"), keyB, "cannot read the CA certificate " + filepath.Join(dir, "missing.pem")},
		{certA, filepath.Join(dir, "missing.key"), "cannot read the CA key"},
		{certA, keyB, "does not belong to the certificate"},
	} {
		settings := `{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {"caCertPath": ` + strconv.Quote(c.cert) + `, "caKeyPath": ` + strconv.Quote(c.key) + `}},
			"filesystem": {"denyRead": [], "allowWrite": [` + strconv.Quote(dir) + `], "denyWrite": []}}`
		_, _, _, err := runScript(t, settings, "touch "+marker)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "network.tlsTerminate") {
			t.Errorf("cert %s key %s: got %v, want %q", c.cert, c.key, err, c.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran")
		}
	}
}

// TestTLSCAKeyHidden: with caCertPath/caKeyPath the run uses that CA, and
// the command cannot read the key.
func TestTLSCAKeyHidden(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	u := newUpstream(t, nil)
	dir := t.TempDir()
	ca, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	testenv.WriteFile(t, certPath, ca.PEM, 0o644)
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, keyPath, pemBlock("PRIVATE KEY", der), 0o600)
	settings := tlsSettings(t, u, `"caCertPath": `+strconv.Quote(certPath)+`, "caKeyPath": `+strconv.Quote(keyPath), "")
	script := noProxyOff + `echo "key=[$(cat ` + keyPath + ` 2>&1)]"; curl -sS -v https://127.0.0.1:` + u.port + `/own 2>&1 | grep -e 'issuer:' -e hello`
	out, errs, _, err := runScript(t, settings, script)
	if err != nil {
		t.Fatalf("%v %s", err, errs)
	}
	if strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("the CA key is readable in the sandbox:\n%s", out)
	}
	if !strings.Contains(out, "issuer: O=srt sandbox; CN="+ca.Cert.Subject.CommonName) || !strings.Contains(out, "hello /own") {
		t.Errorf("the run does not use the given CA:\n%s\n%s", out, errs)
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// plainUpstream is an HTTP server on loopback that records and echoes the
// Authorization header.
func plainUpstream(t *testing.T) (port string, seen func() string) {
	var mu sync.Mutex
	var got []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s auth=%q", r.URL.Path, r.Header.Get("Authorization")))
		mu.Unlock()
		fmt.Fprintf(w, "plain %s auth=%s\n", r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(s.Close)
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	return port, func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(got, "\n") }
}

func randomToken(t *testing.T) string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "ghp_" + fmt.Sprintf("%x", b) // 40 bytes
}

// TestMaskedCredential: the command holds a sentinel (fake_value_<uuid4>);
// the proxy swaps in the real token only for the inject host on
// terminated TLS, and there only in the header that carries it (the body
// keeps the sentinel, and the run records where it was left); another
// host and plain HTTP get the sentinel, and an upstream that echoes the
// token hands back the sentinel. The real value is in nothing the
// command can read: its environment, /proc of every process it sees, the
// files srt made for the run, srt's bubblewrap argv.
func TestMaskedCredential(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	u := newUpstream(t, nil)
	pport, plainSeen := plainUpstream(t)
	real := randomToken(t)
	settings := `{"network": {"allowedDomains": ["127.0.0.1", "localhost"], "deniedDomains": [],
		"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(u.caFile) + `]}},
		"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["127.0.0.1"]}, {"name": "DENIED_VAR", "mode": "deny"}]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	script := noProxyOff + `
printf 'sentinel=%s\n' "$GH_TOKEN"
printenv DENIED_VAR || echo "denied var unset"
curl -sS -H "Authorization: Bearer $GH_TOKEN" --data "token=$GH_TOKEN" https://127.0.0.1:` + u.port + `/inject
curl -sS -H "Authorization: Bearer $GH_TOKEN" --data "token=$GH_TOKEN" https://localhost:` + u.port + `/other
curl -sS -H "Authorization: Bearer $GH_TOKEN" http://127.0.0.1:` + pport + `/plain
echo ---proc
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; echo; done
echo ---files
find "$(dirname "$(dirname "$SSL_CERT_FILE")")" -type f -exec cat {} + 2>&1
`
	out, errs, res, err := runScript(t, settings, script, "GH_TOKEN="+real, "DENIED_VAR=gone")
	if err != nil {
		t.Fatalf("%v %s", err, errs)
	}
	var sentinel string
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "sentinel="); ok {
			sentinel = v
		}
	}
	if !strings.HasPrefix(sentinel, "fake_value_") || len(sentinel) != max(len(real), 47) {
		t.Fatalf("sentinel %q: want fake_value_<uuid4>... of %d bytes\n%s", sentinel, max(len(real), 47), out)
	}
	if strings.Contains(out, real) || strings.Contains(errs, real) {
		t.Errorf("the real value reached the command:\n%s\n%s", out, errs)
	}
	if strings.Contains(strings.Join(res.Argv, " "), real) {
		t.Errorf("the real value is in srt's bubblewrap argv")
	}
	if !strings.Contains(out, "denied var unset") || strings.Contains(out, "gone") {
		t.Errorf("mode deny left the variable:\n%s", out)
	}
	if _, files, _ := strings.Cut(out, "---files\n"); !strings.Contains(files, "-----BEGIN CERTIFICATE") || !strings.Contains(files, `"placeholders"`) {
		t.Errorf("the run's files were not read:\n%s", out)
	}
	seen := u.requests()
	for _, want := range []string{
		fmt.Sprintf("/inject auth=%q body=%q", "Bearer "+real, "token="+sentinel),
		fmt.Sprintf("/other auth=%q body=%q", "Bearer "+sentinel, "token="+sentinel),
	} {
		if !strings.Contains(seen, want) {
			t.Errorf("upstream: missing %s in\n%s", want, seen)
		}
	}
	var lines []string
	for _, v := range res.Violations {
		lines = append(lines, v.Line)
	}
	if want := "deny credential-inject 127.0.0.1:" + u.port + " (GH_TOKEN: the stand-in was sent in the request body, not the real value)"; !slices.Contains(lines, want) {
		t.Errorf("violations %q, want %q", lines, want)
	}
	if want := fmt.Sprintf("/plain auth=%q", "Bearer "+sentinel); !strings.Contains(plainSeen(), want) {
		t.Errorf("plain HTTP without allowPlaintextInject: want %s, got %s", want, plainSeen())
	}
	// The echo of the real token comes back as the sentinel.
	if want := "hello /inject auth=Bearer " + sentinel + " body=token=" + sentinel; !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
}

// TestMaskedCredentialPlaintext: with allowPlaintextInject and no TLS
// termination, plain HTTP to an inject host carries the real value.
func TestMaskedCredentialPlaintext(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	pport, seen := plainUpstream(t)
	real := randomToken(t)
	settings := `{"network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": []},
		"credentials": {"allowPlaintextInject": true, "envVars": [{"name": "GH_TOKEN", "mode": "mask"}]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	out, errs, _, err := runScript(t, settings, noProxyOff+`curl -sS -H "Authorization: Bearer $GH_TOKEN" http://127.0.0.1:`+pport+`/plain`, "GH_TOKEN="+real)
	if err != nil {
		t.Fatalf("%v %s", err, errs)
	}
	if want := fmt.Sprintf("/plain auth=%q", "Bearer "+real); !strings.Contains(seen(), want) {
		t.Errorf("want %s, got %s", want, seen())
	}
	if strings.Contains(out, real) || !strings.Contains(out, "plain /plain auth=Bearer fake_value_") {
		t.Errorf("the answer: %s", out)
	}
}

// TestMaskedCredentialUnset: a masked variable that is not set stops the
// run before the command starts.
func TestMaskedCredentialUnset(t *testing.T) {
	testenv.Require(t, "bwrap")
	os.Unsetenv("SRT_TEST_UNSET_TOKEN")
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	settings := `{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}},
		"credentials": {"envVars": [{"name": "SRT_TEST_UNSET_TOKEN", "mode": "mask"}]},
		"filesystem": {"denyRead": [], "allowWrite": [` + strconv.Quote(dir) + `], "denyWrite": []}}`
	_, _, _, err := runScript(t, settings, "touch "+marker)
	if err == nil || !strings.Contains(err.Error(), "SRT_TEST_UNSET_TOKEN is masked but not set") || !strings.Contains(err.Error(), "credentials.envVars[0]") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
}

// TestTLSExcludeLive: a policy update that excludes a host applies to the
// next CONNECT of a running sandbox, and counts as a network change only.
func TestTLSExcludeLive(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	u := newUpstream(t, nil)
	terminated := compileFull(t, tlsSettings(t, u, "", ""))
	excluded := compileFull(t, tlsSettings(t, u, `"excludeDomains": ["127.0.0.1"]`, ""))
	if FixedPartsDiffer(terminated, excluded) {
		t.Error("a change of excludeDomains counted as a fixed change")
	}
	if !FixedPartsDiffer(terminated, compile(t, `"allowedDomains": ["127.0.0.1:`+u.port+`"], "deniedDomains": []`)) {
		t.Error("dropping tlsTerminate was not noticed as a fixed change")
	}
	m, err := NewManager(terminated, ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The command reports each new exit code of a pinning curl until it
	// succeeds; the test excludes the host once the first code arrives.
	pinned := `curl -s -k -o /dev/null --pinnedpubkey '` + u.pin + `' https://127.0.0.1:` + u.port + `/`
	script := noProxyOff + `last=; for i in $(seq 200); do ` + pinned + `; c=$?; [ "$c" = "$last" ] || echo $c; last=$c; [ $c = 0 ] && exit 0; sleep 0.05; done; exit 1`
	pr, pw := io.Pipe()
	var errb strings.Builder
	done := make(chan error, 1)
	go func() {
		dir := t.TempDir()
		_, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{Stdout: pw, Stderr: &errb, Stdin: strings.NewReader(""), Home: dir, Cwd: dir})
		pw.Close()
		done <- err
	}()
	var seen []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if len(seen) == 1 {
			if err := m.Update(excluded); err != nil {
				t.Error(err)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "90 0" {
		t.Errorf("saw %v, stderr %s", seen, errb.String())
	}
}
