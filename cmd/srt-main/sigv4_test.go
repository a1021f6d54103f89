//go:build linux

package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"srt.dev/internal/sigv4test"
	"srt.dev/internal/testenv"
	"srt.dev/internal/testtls"
)

// awsUpstream is an HTTPS server on 127.0.0.1 (its CA in caFile) that
// checks each request's SigV4 signature with the real key, by having
// the AWS SDK sign a copy: 200 "verified PATH", or 401 and why.
type awsUpstream struct {
	port, caFile string
	mu           sync.Mutex
	seen         []string // path, verdict and Authorization of each request
}

func (u *awsUpstream) requests() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.seen, "\n")
}

func newAWSUpstream(t *testing.T, keyID, secret, token string) *awsUpstream {
	t.Helper()
	u := &awsUpstream{}
	srv, err := testtls.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		verdict := "verified"
		if err := sigv4test.Verify(r, body, keyID, secret, token); err != nil {
			verdict = "not verified: " + err.Error()
		}
		u.mu.Lock()
		u.seen = append(u.seen, fmt.Sprintf("%s %s auth=%q body=%q", r.URL.Path, strings.SplitN(verdict, ":", 2)[0], r.Header.Get("Authorization"), body))
		u.mu.Unlock()
		if verdict != "verified" {
			w.WriteHeader(http.StatusUnauthorized)
		}
		fmt.Fprintf(w, "%s %s\n", verdict, r.URL.Path)
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

func randomAlnum(t *testing.T, prefix string, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}

// awsSettings masks the standard AWS variables, which pair themselves,
// for an upstream on 127.0.0.1.
func awsSettings(u *awsUpstream, sigv4 string) string {
	return `{"network": {"allowedDomains": ["127.0.0.1:` + u.port + `", "localhost:` + u.port + `"], "deniedDomains": [],
		"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(u.caFile) + `]}},
	"credentials": {"envVars": [
		{"name": "AWS_ACCESS_KEY_ID", "mode": "mask", "injectHosts": ["127.0.0.1"]},
		{"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask", "injectHosts": ["127.0.0.1"]},
		{"name": "AWS_SESSION_TOKEN", "mode": "mask", "injectHosts": ["127.0.0.1"]}]` + sigv4 + `},
	"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
}

// TestSigV4Live: curl --aws-sigv4 in a sandbox signs with the stand-ins
// it sees, and the upstream verifies the signature with the real key;
// the shapes srt cannot re-sign are refused until a control line sets
// them to passthrough; the same request to a host outside the inject
// hosts goes as signed; the real values are nowhere the command can read.
func TestSigV4Live(t *testing.T) {
	requireSandbox(t)
	keyID := randomAlnum(t, "AKIA", 16)
	secret := randomAlnum(t, "", 40)
	token := randomAlnum(t, "IQoJb3JpZ2luX2Vj", 80)
	u := newAWSUpstream(t, keyID, secret, token)
	t.Setenv("AWS_ACCESS_KEY_ID", keyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", token)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(awsSettings(u, "")), 0o644)
	script := `export NO_PROXY= no_proxy=
U=https://127.0.0.1:` + u.port + `
sig() { curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-security-token: $AWS_SESSION_TOKEN" "$@"; }
sig $U/bucket/get.txt
sig -X PUT -H 'Content-Type: text/plain' --data-binary 'hello sigv4' $U/bucket/put.txt
sig "$U/bucket/list?list-type=2&prefix=a%20b&delimiter=%2F"
sig -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X PUT --data-binary 'unsigned' $U/bucket/unsigned
sig https://localhost:` + u.port + `/bucket/elsewhere
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
shapes() {
  d=$(date -u +%Y%m%dT%H%M%SZ)
  p=$(code "$U/b/presigned?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=$AWS_ACCESS_KEY_ID%2F${d%%T*}%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=$d&X-Amz-SignedHeaders=host&X-Amz-Signature=00")
  s=$(code --aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H 'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD' -X PUT --data-binary x $U/b/streaming)
  a=$(code -H "X-Amz-Date: $d" -H "Authorization: AWS4-ECDSA-P256-SHA256 Credential=$AWS_ACCESS_KEY_ID/${d%%T*}/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00" $U/b/sigv4a)
  echo "shapes presigned=$p streaming=$s sigv4a=$a"
}
shapes
curl -sS -X PUT -H "X-Amz-Date: 20261203T010203Z" -H 'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD' -H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/20261203/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00" --data-binary x $U/b/refused
read go
for i in $(seq 300); do r=$(shapes); [ "$r" = "shapes presigned=401 streaming=401 sigv4a=401" ] && break; sleep 0.03; done
echo "$r"
echo ---env
env
echo ---proc
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; echo; done
echo ---files
find "$(dirname "$(dirname "$SSL_CERT_FILE")")" -type f -readable -exec cat {} + 2>&1
`
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd, in, out, errb := srtWithControl(t, dir, r, "--debug", "-c", script)
	r.Close()
	var got strings.Builder
	readUntil := func(prefix string) string {
		for {
			line, err := out.ReadString('\n')
			got.WriteString(line)
			if strings.HasPrefix(line, prefix) {
				return strings.TrimSpace(line)
			}
			if err != nil {
				t.Fatalf("no %q line: %v\n%s\nstderr:\n%s", prefix, err, got.String(), errb)
			}
		}
	}
	if line := readUntil("shapes "); line != "shapes presigned=403 streaming=403 sigv4a=403" {
		t.Errorf("with the default policy: %s, want every shape refused", line)
	}
	refusal := readUntil("srt cannot re-sign")
	for _, want := range []string{"streaming upload", "credentials.sigv4.streaming", "AWS_ACCESS_KEY_ID"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("refusal %q lacks %q", refusal, want)
		}
	}
	oneLine := strings.ReplaceAll(awsSettings(u, `, "sigv4": {"streaming": "passthrough", "presigned": "passthrough", "sigv4a": "passthrough"}`), "\n", " ")
	io.WriteString(w, oneLine+"\n")
	io.WriteString(in, "go\n")
	if line := readUntil("shapes "); line != "shapes presigned=401 streaming=401 sigv4a=401" {
		t.Errorf("after the control line: %s, want every shape passed to the upstream (which refuses the stand-in key)", line)
	}
	rest, _ := io.ReadAll(out)
	got.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("srt: %v\n%s", err, errb)
	}
	output := got.String()
	for _, want := range []string{
		"verified /bucket/get.txt", "verified /bucket/put.txt", "verified /bucket/list", "verified /bucket/unsigned",
		"not verified: signed with key id \"fake_value_",
	} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	for name, v := range map[string]string{"key id": keyID, "secret": secret, "token": token} {
		if strings.Contains(output, v) || strings.Contains(errb.String(), v) {
			t.Errorf("the real %s reached the command or srt's log:\n%s\n%s", name, output, errb)
		}
	}
	seen := u.requests()
	for _, want := range []string{"/bucket/elsewhere not verified", "/b/presigned not verified", "/b/streaming not verified", "/b/sigv4a not verified"} {
		if !strings.Contains(seen, want) {
			t.Errorf("upstream lacks %q:\n%s", want, seen)
		}
	}
	if strings.Contains(seen, "/b/refused") {
		t.Errorf("a refused request reached the upstream:\n%s", seen)
	}
	for _, want := range []string{"re-signed for AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", "credentials.sigv4 applies from the next request"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("debug log lacks %q:\n%s", want, errb)
		}
	}
}

// TestSigV4BadPairs: an awsPairs entry naming a variable that is not
// masked, or not set, stops srt before the command runs, naming the
// entry and its place in the file.
func TestSigV4BadPairs(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := func(secretMode string) string {
		return `{"network": {"allowedDomains": ["s3.amazonaws.com"], "deniedDomains": [], "tlsTerminate": {}},
	"credentials": {"envVars": [{"name": "CI_KEY", "mode": "mask"}, {"name": "CI_SECRET", "mode": "` + secretMode + `"}],
		"awsPairs": [{"accessKeyIdVar": "CI_KEY", "secretAccessKeyVar": "CI_SECRET"}]},
	"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	}
	t.Setenv("CI_KEY", "AKIAIOSFODNN7EXAMPLE")
	os.Unsetenv("CI_SECRET")
	for _, tc := range []struct{ mode, want string }{
		{"deny", `s.json:3:67: credentials.awsPairs[0].secretAccessKeyVar: "CI_SECRET" must also be listed in credentials.envVars with mode "mask"`},
		{"mask", `credentials.awsPairs[0].secretAccessKeyVar (s.json:3:16): CI_SECRET is not set in srt's environment`},
	} {
		testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(settings(tc.mode)), 0o644)
		code, _, errOut := srt(t, dir, "", "-s", "s.json", "-c", "touch ran")
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("secret in mode %s: exit %d, stderr %q; want 1 and %q", tc.mode, code, errOut, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Fatalf("the command ran")
		}
	}
}
