package compiler

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

func load(t *testing.T, src string) *schema.Settings {
	t.Helper()
	s, diags := schema.Options{OS: schema.OSPosix}.Load("s.json", []byte(src))
	if diags != nil {
		t.Fatal(diags)
	}
	return s
}

func paths(rules []policy.PathRule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.Path.String())
	}
	return out
}

func TestCompileFilesystem(t *testing.T) {
	s := load(t, `{
  "network": {"allowedDomains": ["github.com", "*.npmjs.org:443"], "deniedDomains": ["*:22"]},
  "filesystem": {
    "denyRead": ["~/.ssh", "**/.env"],
    "allowRead": ["./.env.example"],
    "allowWrite": [".", "/tmp/build/**"],
    "denyWrite": ["./secrets/", {"path": "./keep[1]", "literal": true}],
    "allowGitConfig": true
  },
  "credentials": {"files": [{"path": "~/.netrc", "mode": "deny"}, {"path": "~/.config/gh/hosts.yml", "mode": "mask"}], "allowPlaintextInject": true},
  "mandatoryDenySearchDepth": 5
}`)
	p, _, err := Compile(s, schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	fs := p.Filesystem
	if diff := cmp.Diff([]string{"${HOME}/.ssh", "${CWD}/**/.env", "${HOME}/.netrc"}, paths(fs.DenyRead)); diff != "" {
		t.Errorf("denyRead (-want +got):\n%s", diff)
	}
	wantWrite := append([]string{"/dev/stdout", "/dev/stderr", "/dev/null", "/dev/tty", "/dev/dtracehelper", "/dev/autofs_nowait", "/tmp/claude", "/private/tmp/claude"}, "${HOME}/.npm/_logs", "${HOME}/.claude/debug", "${CWD}", "/tmp/build")
	if diff := cmp.Diff(wantWrite, paths(fs.AllowWrite)); diff != "" {
		t.Errorf("allowWrite (-want +got):\n%s", diff)
	}
	wantDeny := []string{"${CWD}/secrets", "${CWD}/keep[1]"}
	for _, f := range MandatoryFiles {
		wantDeny = append(wantDeny, "${CWD}/"+f)
	}
	for _, d := range MandatoryDirs {
		wantDeny = append(wantDeny, "${CWD}/"+d)
	}
	if diff := cmp.Diff(wantDeny, paths(fs.DenyWrite)); diff != "" {
		t.Errorf("denyWrite (-want +got):\n%s", diff)
	}
	if fs.DenyWrite[1].Pattern || !fs.DenyWrite[1].Literal {
		t.Errorf("literal entry compiled as %+v", fs.DenyWrite[1])
	}
	if !fs.DenyRead[1].Pattern {
		t.Errorf("**/.env is a pattern: %+v", fs.DenyRead[1])
	}
	if got := paths(fs.CredentialMasks); len(got) != 1 || got[0] != "${HOME}/.config/gh/hosts.yml" {
		t.Errorf("credential masks = %v", got)
	}
	if sc := fs.MandatoryScan; sc == nil || sc.Depth != 5 || sc.GitConfig || sc.Origin.Key != "mandatoryDenySearchDepth" {
		t.Errorf("mandatory scan = %+v", sc)
	}
	// Provenance: the settings key and where it was written.
	if o := fs.DenyRead[0].Origin; o.Key != "filesystem.denyRead[0]" || o.Pos != "s.json:4:18" {
		t.Errorf("origin of denyRead[0] = %+v", o)
	}
	if o := fs.DenyRead[2].Origin; o.Key != "credentials.files[0].path" {
		t.Errorf("origin of the credential deny = %+v", o)
	}
	if o := fs.AllowWrite[0].Origin; o != policy.Default {
		t.Errorf("origin of a default = %+v", o)
	}
	if o := fs.DenyWrite[2].Origin; o != policy.Mandatory {
		t.Errorf("origin of a mandatory deny = %+v", o)
	}
	if p.Network.Denied[0].Host != "*" || p.Network.Denied[0].Port != 22 || p.Network.Allowed[1].Origin.Key != "network.allowedDomains[1]" {
		t.Errorf("network = %+v", p.Network)
	}
	if diff := cmp.Diff([]policy.SeccompRule{policy.SeccompKeyring, policy.SeccompUnix, policy.SeccompNamespaces}, p.Process.Seccomp); diff != "" {
		t.Errorf("seccomp (-want +got):\n%s", diff)
	}
}

func TestConvenienceDirs(t *testing.T) {
	tests := []struct {
		name       string
		fs         string
		wantLogs   bool
		wantClaude bool
	}{
		{"nothing denied", `"denyRead": []`, true, true},
		{"home denied", `"denyRead": ["~"]`, false, false},
		{"root denied", `"denyRead": ["/"]`, false, false},
		{"npm denied", `"denyRead": ["~/.npm"]`, false, true},
		{"pattern denied", `"denyRead": ["~/.*"]`, false, false},
		{"home denied, npm reopened", `"denyRead": ["~"], "allowRead": ["~/.npm"]`, true, false},
		{"reopened outside the deny", `"denyRead": ["~/.npm"], "allowRead": ["/"]`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {`+tt.fs+`, "allowWrite": [], "denyWrite": []}}`)
			p, _, err := Compile(s, schema.Options{OS: schema.OSPosix})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(paths(p.Filesystem.AllowWrite), " ")
			if strings.Contains(got, "/.npm/_logs") != tt.wantLogs || strings.Contains(got, "/.claude/debug") != tt.wantClaude {
				t.Errorf("allowWrite = %s; want .npm/_logs %v, .claude/debug %v", got, tt.wantLogs, tt.wantClaude)
			}
		})
	}
}

func TestCompileSwitches(t *testing.T) {
	s := load(t, `{
  "network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true, "allowUnixSockets": ["/var/run/docker.sock", "./app.sock"]},
  "filesystem": {"disabled": true, "denyRead": ["~/.ssh"], "allowWrite": [], "denyWrite": ["/etc"]},
  "credentials": {"envVars": [{"name": "A", "mode": "deny"}, {"name": "B", "mode": "mask"}], "files": [{"path": "~/.netrc", "mode": "deny"}, {"path": "~/.tok", "mode": "mask"}], "allowPlaintextInject": true},
  "allowNestedUserNamespaces": true,
  "git": {"safeDirectories": ["/repo"]}
}`)
	p, _, err := Compile(s, schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	// The keyring rules stay: no setting turns them off.
	if diff := cmp.Diff([]policy.SeccompRule{policy.SeccompKeyring}, p.Process.Seccomp); diff != "" {
		t.Errorf("seccomp (-want +got):\n%s", diff)
	}
	fs := p.Filesystem
	if !fs.Disabled || len(fs.DenyRead)+len(fs.DenyWrite)+len(fs.AllowWrite) != 0 || fs.MandatoryScan != nil {
		t.Errorf("a disabled file-system policy still has rules: %+v", fs)
	}
	if len(fs.CredentialMasks) != 1 {
		t.Errorf("masked credential files must still apply: %+v", fs.CredentialMasks)
	}
	if e := p.Env; len(e.Unset) != 1 || e.Unset[0].Name != "A" || len(e.Mask) != 1 || e.Mask[0].Name != "B" || e.GitSafeDirectories[0] != "/repo" {
		t.Errorf("env = %+v", e)
	}
	if u := paths(p.Network.AllowUnixSockets); u[1] != "${CWD}/app.sock" {
		t.Errorf("unix sockets = %v", u)
	}
}

// TestDeterministic: the same settings compile to the same bytes.
func TestDeterministic(t *testing.T) {
	src := `{"network": {"allowedDomains": ["a.com"], "deniedDomains": [], "deniedDomainReasons": {"b.com": "x", "a.com": "y", "c.com": "z"}}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`
	var first []byte
	for i := 0; i < 20; i++ {
		p, _, err := Compile(load(t, src), schema.Options{OS: schema.OSPosix})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("compile %d differs:\n%s\n%s", i, first, b)
		}
	}
}

func TestAllowList(t *testing.T) {
	l, err := AllowList([]string{"example.com", "*.github.com:443", "[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || l[1].Host != "*.github.com" || l[1].Port != 443 || l[2].Host != "::1" || l[2].Origin.Key != "commandNetworkLists.allowedDomains[2]" {
		t.Errorf("%+v", l)
	}
	if _, ok := l.Match("api.github.com", 443); !ok {
		t.Error("*.github.com:443 does not match api.github.com:443")
	}
	for _, bad := range []string{"https://example.com", "*", "not-a-domain", "example.com:0"} {
		_, err := AllowList([]string{"ok.example.com", bad})
		if err == nil || !strings.Contains(err.Error(), "entry 1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if l, err := AllowList(nil); err != nil || len(l) != 0 {
		t.Errorf("empty list: %v %v", l, err)
	}
}

// TestSwitchOrigins: the compiler records where each switch it reads was
// set, and nothing for a switch the file leaves out.
func TestSwitchOrigins(t *testing.T) {
	src := `{
  "network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true, "allowLocalBinding": false,
    "allowMachLookup": [], "strictAllowlist": true, "tlsTerminate": {}},
  "filesystem": {"disabled": false, "allowGitConfig": true, "denyRead": [], "allowWrite": [], "denyWrite": []},
  "credentials": {"allowPlaintextInject": true},
  "mandatoryDenySearchDepth": 2,
  "allowNestedUserNamespaces": true, "enableWeakerNestedSandbox": false, "enableWeakerNetworkIsolation": true,
  "allowAppleEvents": false, "allowPty": true
}`
	p, diags, err := CompileFile("s.json", []byte(src), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	// Where each value starts, found in the text: line and column (1-based)
	// of the character after `"name": `.
	at := func(name string) string {
		i := strings.Index(src, `"`+name+`": `) + len(name) + 4
		line := strings.Count(src[:i], "\n") + 1
		col := i - strings.LastIndex(src[:i], "\n")
		return fmt.Sprintf("s.json:%d:%d", line, col)
	}
	want := map[string]policy.Origin{}
	for _, k := range []string{"network.allowAllUnixSockets", "network.allowLocalBinding", "network.allowMachLookup",
		"network.strictAllowlist", "network.tlsTerminate", "filesystem.disabled", "filesystem.allowGitConfig",
		"credentials.allowPlaintextInject", "mandatoryDenySearchDepth", "allowNestedUserNamespaces",
		"enableWeakerNestedSandbox", "enableWeakerNetworkIsolation", "allowAppleEvents", "allowPty"} {
		want[k] = policy.Origin{Key: k, Pos: at(k[strings.LastIndex(k, ".")+1:])}
	}
	if diff := cmp.Diff(want, p.Switches); diff != "" {
		t.Errorf("switches (-want +got):\n%s", diff)
	}
	p, _, _ = CompileFile("s.json", []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), schema.Options{OS: schema.OSPosix})
	if len(p.Switches) != 0 {
		t.Errorf("switches of a file that sets none: %v", p.Switches)
	}
}
