//go:build linux

package main

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"srt.dev/internal/testenv"
	"srt.dev/internal/testtls"
)

// TestTLSTerminateAndMask: srt with tlsTerminate gives the command a
// readable trust bundle in the CA variables, gone after the run; a masked
// variable is a sentinel, and an unset one stops srt before the command.
func TestTLSTerminateAndMask(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": ["example.com"], "deniedDomains": [], "tlsTerminate": {}},
		"credentials": {"envVars": [{"name": "SRT_TEST_TOKEN", "mode": "mask"}]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	real := "tok_0123456789abcdefghijklmnopqrstuvwxyz"
	t.Setenv("SRT_TEST_TOKEN", real)
	code, out, errOut := srt(t, dir, "", "-s", "s.json", "-c", `echo "$SRT_TEST_TOKEN"; echo "$SSL_CERT_FILE $GIT_SSL_CAINFO"; head -1 "$SSL_CERT_FILE"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "fake_value_") || len(lines[0]) != max(len(real), 47) || lines[2] != "-----BEGIN CERTIFICATE-----" {
		t.Fatalf("got %q", out)
	}
	bundle := strings.Fields(lines[1])
	if len(bundle) != 2 || bundle[0] != bundle[1] {
		t.Fatalf("CA variables: %q", lines[1])
	}
	if _, err := os.Stat(bundle[0]); !os.IsNotExist(err) {
		t.Errorf("the trust bundle outlives the run: %v", err)
	}
	os.Unsetenv("SRT_TEST_TOKEN")
	code, _, errOut = srt(t, dir, "", "-s", "s.json", "-c", "true")
	if code != 1 || !strings.Contains(errOut, "credentials.envVars[0] (s.json:2:") || !strings.Contains(errOut, "SRT_TEST_TOKEN is masked but not set") {
		t.Errorf("unset masked variable: %d %q", code, errOut)
	}
}

// TestKilledTLS: the trust bundle of a run whose srt was killed with
// SIGKILL is removed by the reaper.
func TestKilledTLS(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	cmd, out := cli(t, dir, "--settings", "s.json", "-c", `echo "$SSL_CERT_FILE"; sleep 14.142`)
	line, _ := out.ReadString('\n')
	bundle := strings.TrimSpace(line)
	if _, err := os.Stat(bundle); err != nil || !strings.HasPrefix(bundle, filepath.Join(dir, ".run")) {
		t.Fatalf("bundle %q: %v", bundle, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Dir(bundle)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trust bundle's directory is left after srt was killed: %s", filepath.Dir(bundle))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tenants is an HTTPS server on 127.0.0.1 (its CA in caFile) that serves
// every name on one address, as a CDN or a hosting platform does: it
// answers for the tenant its Host header names, echoing the
// Authorization header it got, gzipped when the request accepts gzip;
// /force/gzip gzips whatever the request asked, /force/br labels a plain
// body br.
type tenants struct {
	port, caFile string
	mu           sync.Mutex
	seen         []string
}

func newTenants(t *testing.T) *tenants {
	t.Helper()
	u := &tenants{}
	srv, err := testtls.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text := "tenant=" + r.Host + " auth=" + r.Header.Get("Authorization") + "\n"
		u.mu.Lock()
		u.seen = append(u.seen, strings.TrimSpace(text))
		u.mu.Unlock()
		switch {
		case r.URL.Path == "/force/br":
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, text)
		case r.URL.Path == "/force/gzip" || strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"):
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			io.WriteString(gz, text)
			gz.Close()
		default:
			io.WriteString(w, text)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	u.port = srv.Port
	u.caFile = filepath.Join(t.TempDir(), "upstream-ca.pem")
	if err := os.WriteFile(u.caFile, srv.CA.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u *tenants) requests() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.seen, "\n")
}

// TestTLSTokenTenants: a command in the sandbox holds the stand-in of a
// token masked for localhost. Real curl --compressed against an inject
// host that echoes the request gzipped (even when asked for identity)
// gets the stand-in back, never the token; a coding srt cannot read is
// refused; a request that names the other tenant (127.0.0.1) inside the
// tunnel to localhost gets 421 and reaches no one. The control run,
// without masking or termination, shows each primitive: the compressed
// echo hands the token back, and the Host header picks the tenant.
func TestTLSTokenTenants(t *testing.T) {
	requireSandbox(t)
	u := newTenants(t)
	token := randomAlnum(t, "ghp_", 36)
	t.Setenv("GH_TOKEN", token)
	dir := project(t)
	network := `"allowedDomains": ["localhost:` + u.port + `", "127.0.0.1:` + u.port + `"], "deniedDomains": []`
	testenv.WriteFile(t, filepath.Join(dir, "plain.json"), []byte(`{"network": {`+network+`},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	testenv.WriteFile(t, filepath.Join(dir, "masked.json"), []byte(`{"network": {`+network+`, "tlsTerminate": {"extraCaCertPaths": [`+strconv.Quote(u.caFile)+`]}},
		"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["localhost"]}]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	script := `export NO_PROXY= no_proxy=
c() { curl -sS --cacert "$CA" -H "Authorization: Bearer $GH_TOKEN" "$@"; echo; }
c --compressed https://localhost:` + u.port + `/echo
c --compressed https://localhost:` + u.port + `/force/gzip
c --compressed -w '%{http_code}' https://localhost:` + u.port + `/force/br
c -w '%{http_code}' -H 'Host: 127.0.0.1:` + u.port + `' https://localhost:` + u.port + `/echo
`
	t.Setenv("CA", u.caFile)
	code, out, errOut := srt(t, dir, "", "-s", "plain.json", "-c", script)
	if code != 0 {
		t.Fatalf("control: exit %d: %s", code, errOut)
	}
	// The body labelled br does not decode: curl says so on stderr.
	want := "tenant=localhost:" + u.port + " auth=Bearer " + token + "\n\n" +
		"tenant=localhost:" + u.port + " auth=Bearer " + token + "\n\n" +
		"200\n" +
		"tenant=127.0.0.1:" + u.port + " auth=Bearer " + token + "\n200\n"
	if out != want {
		t.Fatalf("control run:\n%s\nwant:\n%s", out, want)
	}

	// The CA variable is the run's bundle now; the token is masked.
	t.Setenv("CA", "")
	script = strings.ReplaceAll(script, `--cacert "$CA" `, "")
	before := len(strings.Split(u.requests(), "\n"))
	code, out, errOut = srt(t, dir, "", "--violations", "-s", "masked.json", "-c", `echo "$GH_TOKEN"; `+script)
	if code != 0 {
		t.Fatalf("masked: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, token) || strings.Contains(errOut, token) {
		t.Fatalf("the real token reached the command or srt's output:\n%s\n%s", out, errOut)
	}
	stand, _, _ := strings.Cut(out, "\n")
	// fake_value_<uuid4>, padded to the token's length when that is longer.
	if !strings.HasPrefix(stand, "fake_value_") || len(stand) != max(len(token), len("fake_value_")+36) {
		t.Fatalf("stand-in %q for a token of %d bytes", stand, len(token))
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 8 ||
		lines[1] != "tenant=localhost:"+u.port+" auth=Bearer "+stand ||
		lines[3] != "tenant=localhost:"+u.port+" auth=Bearer "+stand ||
		!strings.Contains(lines[5], `srt refused the response of localhost: the response is encoded with "br"`) || lines[6] != "502" ||
		!strings.Contains(lines[7], `srt did not forward this request: it names "127.0.0.1:`+u.port+`", but its TLS tunnel is to localhost:`+u.port) || lines[8] != "421" {
		t.Errorf("masked run:\n%s", out)
	}
	if !strings.Contains(errOut, "deny network-outbound 127.0.0.1:"+u.port+" (the request names another host than its TLS tunnel to localhost:"+u.port+")") {
		t.Errorf("no violation for the misdirected request:\n%s", errOut)
	}
	// The upstream got the token for localhost (else nothing was tested),
	// and nothing for the other tenant.
	seen := strings.Split(u.requests(), "\n")[before:]
	wantSeen := []string{
		"tenant=localhost:" + u.port + " auth=Bearer " + token,
		"tenant=localhost:" + u.port + " auth=Bearer " + token,
		"tenant=localhost:" + u.port + " auth=Bearer " + token,
	}
	if strings.Join(seen, "\n") != strings.Join(wantSeen, "\n") {
		t.Errorf("the upstream saw:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(wantSeen, "\n"))
	}
}
