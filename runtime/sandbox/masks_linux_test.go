//go:build linux

package sandbox

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// jwt is an unsigned-looking token with the given payload.
func jwt(payload string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + e([]byte(payload)) + "." + e([]byte("signature-bytes-0123456789abcdef-xyz"))
}

// TestMaskedCredentialFiles: a credential file the command reads shows
// stand-ins where the rule finds secrets (extract: the rest of the file
// stays readable; whole file: its line break stays), and the proxy swaps
// each back for its secret only on the way to the inject host (in the
// body only for the entries whose bodyInjectHosts list it). A masked
// variable with extract keeps its readable part; a JWT keeps the claims
// it does not mask. No secret reaches anything the command can read.
func TestMaskedCredentialFiles(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	u := newUpstream(t, nil)
	home := t.TempDir()
	oauth, whole, key := randomToken(t), randomToken(t), randomToken(t)
	token := jwt(`{"sub":"agent-7","email":"secret@example.com","exp":1999999999}`)
	testenv.MkdirAll(t, filepath.Join(home, ".config/gh"), 0o755)
	hosts := "github.com:\n    oauth_token: " + oauth + "\n    user: me\n"
	testenv.WriteFile(t, filepath.Join(home, ".config/gh/hosts.yml"), []byte(hosts), 0o600)
	testenv.WriteFile(t, filepath.Join(home, ".tok"), []byte(whole+"\n"), 0o600)
	testenv.WriteFile(t, filepath.Join(home, "nomatch.conf"), []byte("nothing secret here\n"), 0o600)
	settings := `{"network": {"allowedDomains": ["127.0.0.1", "localhost"], "deniedDomains": [],
		"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(u.caFile) + `]}},
		"credentials": {
			"files": [
				{"path": "~/.config/gh/hosts.yml", "mode": "mask", "extract": "oauth_token:\\s*(\\S+)", "injectHosts": ["127.0.0.1"]},
				{"path": "~/.tok", "mode": "mask", "injectHosts": ["127.0.0.1"]},
				{"path": "~/nomatch.conf", "mode": "mask", "extract": "key=(\\w+)", "onExtractNoMatch": "deny"}
			],
			"envVars": [
				{"name": "APP_CONFIG", "mode": "mask", "extract": "key=([^;]+)", "injectHosts": ["127.0.0.1"], "bodyInjectHosts": ["127.0.0.1"]},
				{"name": "ID_TOKEN", "mode": "mask", "decode": "jwt", "maskClaims": ["email"], "injectHosts": ["127.0.0.1"], "bodyInjectHosts": ["127.0.0.1"]}
			]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
	script := noProxyOff + `
cat ~/.config/gh/hosts.yml
T=$(sed -n 's/.*oauth_token: //p' ~/.config/gh/hosts.yml)
W=$(cat ~/.tok)
printf 'whole=%s\n' "$W"
printf 'config=%s\n' "$APP_CONFIG"
printf 'jwt=%s\n' "$ID_TOKEN"
cat ~/nomatch.conf 2>&1 | head -c 100; echo "nomatch=$?"
K=${APP_CONFIG#*key=}
curl -sS -H "Authorization: Bearer $T" -H "X-Whole: $W" --data "k=$K&j=$ID_TOKEN" https://127.0.0.1:` + u.port + `/inject
curl -sS -H "Authorization: Bearer $T" --data "k=$K" https://localhost:` + u.port + `/other
echo ---proc
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; echo; done
`
	out, errs, res, err := runScriptIn(t, home, settings, script, "HOME="+home, "APP_CONFIG=user=me;key="+key, "ID_TOKEN="+token)
	if err != nil {
		t.Fatalf("%v %s", err, errs)
	}
	for _, real := range []string{oauth, whole, key, token, "secret@example.com"} {
		if strings.Contains(out, real) || strings.Contains(errs, real) || strings.Contains(strings.Join(res.Argv, " "), real) {
			t.Errorf("the secret %q reached the command or srt's argv:\n%s\n%s", real, out, errs)
		}
	}
	field := func(prefix string) string {
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, prefix); ok {
				return v
			}
		}
		t.Fatalf("no %q in\n%s", prefix, out)
		return ""
	}
	if !strings.Contains(out, "github.com:\n    oauth_token: fake_value_") || !strings.Contains(out, "\n    user: me\n") {
		t.Errorf("hosts.yml as the command sees it:\n%s", out)
	}
	if w := field("whole="); !strings.HasPrefix(w, "fake_value_") || len(w) != max(len(whole), 47) {
		t.Errorf("whole file: %q", w)
	}
	if c := field("config="); !strings.HasPrefix(c, "user=me;key=fake_value_") {
		t.Errorf("APP_CONFIG: %q", c)
	}
	if strings.Contains(out, "nothing secret") || !strings.Contains(errs, "nomatch.conf") {
		t.Errorf("onExtractNoMatch deny: the file must be hidden and a warning given:\n%s\n%s", out, errs)
	}
	claims := func(tok string) string {
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			return ""
		}
		b, _ := base64.RawURLEncoding.DecodeString(parts[1])
		return string(b)
	}
	if c := claims(field("jwt=")); !strings.Contains(c, `"sub":"agent-7"`) || !strings.Contains(c, `"exp":1999999999`) || !strings.Contains(c, `"email":"fake_value_`) {
		t.Errorf("fake token claims: %s", c)
	}
	seen := u.requests()
	if want := fmt.Sprintf("/inject auth=%q body=%q", "Bearer "+oauth, "k="+key+"&j="+token); !strings.Contains(seen, want) {
		t.Errorf("inject host: missing %s in\n%s", want, seen)
	}
	if strings.Contains(strings.SplitN(seen, "/other", 2)[1], oauth) || strings.Contains(strings.SplitN(seen, "/other", 2)[1], key) {
		t.Errorf("another host got a secret:\n%s", seen)
	}
}

// TestMaskedCredentialNoMatchError: onExtractNoMatch "error" stops the run
// before the command starts, naming the entry.
func TestMaskedCredentialNoMatchError(t *testing.T) {
	testenv.Require(t, "bwrap")
	home := t.TempDir()
	testenv.WriteFile(t, filepath.Join(home, "c.conf"), []byte("no key\n"), 0o600)
	marker := filepath.Join(home, "ran")
	settings := `{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}},
		"credentials": {"files": [{"path": "~/c.conf", "mode": "mask", "extract": "key=(\\w+)", "onExtractNoMatch": "error"}]},
		"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	_, _, _, err := runScriptIn(t, home, settings, "touch "+marker, "HOME="+home)
	if err == nil || !strings.Contains(err.Error(), "credentials.files[0]") || !strings.Contains(err.Error(), `onExtractNoMatch is "error"`) {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
}
