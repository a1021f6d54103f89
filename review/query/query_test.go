package query

import (
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/schema"
)

func load(t *testing.T, settings string) *Source {
	t.Helper()
	src, diags, err := Load("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("Load: %v %v", err, diags)
	}
	return src
}

func TestFilesystem(t *testing.T) {
	settings := `{
  "network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}},
  "filesystem": {
    "denyRead": ["~/.ssh", "~", "**/.env", "~/cred.json"],
    "allowRead": ["~/proj", "~/cred.json"],
    "allowWrite": [".", "~/.cache/x", "~/proj/out"],
    "denyWrite": ["./locked"]
  },
  "credentials": {"files": [{"path": "~/.aws/credentials", "mode": "mask"}, {"path": "~/tok", "mode": "deny"}]}
}`
	e := load(t, settings).Evaluator("/h", "/h/proj")
	type want struct {
		allow bool
		rule  string
	}
	tests := []struct {
		op, path string
		want     map[Target]want
	}{
		{"read", "/etc/passwd", map[Target]want{Linux: {true, "default"}, MacOS: {true, "default"}, Windows: {true, "default"}}},
		{"read", "~/.ssh/id_rsa", map[Target]want{Linux: {false, "filesystem.denyRead[0]"}, MacOS: {false, "filesystem.denyRead[0]"}, Windows: {false, "filesystem.denyRead[0]"}}},
		{"read", "~/other", map[Target]want{Linux: {false, "filesystem.denyRead[1]"}, MacOS: {false, "filesystem.denyRead[1]"}, Windows: {false, "filesystem.denyRead[1]"}}},
		{"read", "~/proj/src/a.go", map[Target]want{Linux: {true, "filesystem.allowRead[0]"}, MacOS: {true, "filesystem.allowRead[0]"}, Windows: {true, "filesystem.allowRead[0]"}}},
		// A deny nested inside an allow stays.
		{"read", "./.env", map[Target]want{Linux: {false, "filesystem.denyRead[2]"}, MacOS: {false, "filesystem.denyRead[2]"}, Windows: {false, "filesystem.denyRead[2]"}}},
		// The same path denied and allowed: the allow wins on Linux and
		// macOS; on Windows the deny ACE on the object comes first.
		{"read", "~/cred.json", map[Target]want{Linux: {true, "filesystem.allowRead[1]"}, MacOS: {true, "filesystem.allowRead[1]"}, Windows: {false, "filesystem.denyRead[3]"}}},
		// Linux and Windows restore write roots inside a read deny; macOS
		// does not.
		{"read", "~/.cache/x/f", map[Target]want{Linux: {true, "filesystem.allowWrite[1]"}, MacOS: {false, "filesystem.denyRead[1]"}, Windows: {true, "filesystem.allowWrite[1]"}}},
		// Credential masks: a copy on Linux, a read deny elsewhere.
		{"read", "~/.aws/credentials", map[Target]want{Linux: {true, "credentials.files[0].path"}, MacOS: {false, "credentials.files[0].path"}, Windows: {false, "credentials.files[0].path"}}},
		{"read", "~/tok", map[Target]want{Linux: {false, "credentials.files[1].path"}, MacOS: {false, "credentials.files[1].path"}, Windows: {false, "credentials.files[1].path"}}},
		{"write", "./src/x", map[Target]want{Linux: {true, "filesystem.allowWrite[0]"}, MacOS: {true, "filesystem.allowWrite[0]"}, Windows: {true, "filesystem.allowWrite[0]"}}},
		{"write", "./locked/x", map[Target]want{Linux: {false, "filesystem.denyWrite[0]"}, MacOS: {false, "filesystem.denyWrite[0]"}, Windows: {false, "filesystem.denyWrite[0]"}}},
		{"write", "~/notes", map[Target]want{Linux: {false, "default"}, MacOS: {false, "default"}, Windows: {false, "default"}}},
		// Windows has no mandatory write denies (the plan lists that as a
		// residual risk).
		{"write", "./.bashrc", map[Target]want{Linux: {false, "mandatory"}, MacOS: {false, "mandatory"}, Windows: {true, "filesystem.allowWrite[0]"}}},
		// Below cwd: Linux's scan to depth 3, macOS at any depth, Windows not.
		{"write", "./a/b/.bashrc", map[Target]want{Linux: {false, "mandatory"}, MacOS: {false, "mandatory"}, Windows: {true, "filesystem.allowWrite[0]"}}},
		{"write", "./a/b/c/.bashrc", map[Target]want{Linux: {true, "filesystem.allowWrite[0]"}, MacOS: {false, "mandatory"}, Windows: {true, "filesystem.allowWrite[0]"}}},
		{"write", "./.git/hooks/pre-commit", map[Target]want{Linux: {false, "mandatory"}, MacOS: {false, "mandatory"}, Windows: {true, "filesystem.allowWrite[0]"}}},
		// A read-denied file inside a write root: /dev/null on Linux, a
		// deny ACE on Windows, writable on macOS.
		{"write", "./.env", map[Target]want{Linux: {false, "filesystem.denyRead[2]"}, MacOS: {true, "filesystem.allowWrite[0]"}, Windows: {false, "filesystem.denyRead[2]"}}},
		{"write", "~/.cache/x/f", map[Target]want{Linux: {true, "filesystem.allowWrite[1]"}, MacOS: {true, "filesystem.allowWrite[1]"}, Windows: {true, "filesystem.allowWrite[1]"}}},
	}
	for _, tc := range tests {
		for _, tg := range Targets {
			var d Decision
			p := e.Path(tc.path)
			if tc.op == "read" {
				d = e.Read(p, tg)
			} else {
				d = e.Write(p, tg)
			}
			w := tc.want[tg]
			if d.Allow != w.allow || d.Rule.Key != w.rule {
				t.Errorf("%s %s on %s = %v by %s (%s), want %v by %s", tc.op, tc.path, tg, d.Allow, d.Rule.Key, d.Why, w.allow, w.rule)
			}
		}
	}
}

func TestNetworkAndSockets(t *testing.T) {
	settings := `{
  "network": {
    "allowedDomains": ["github.com", "*.npmjs.org", "example.org:443"],
    "deniedDomains": ["evil.npmjs.org"],
    "allowUnixSockets": ["/var/run/docker.sock"]
  },
  "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}
}`
	src := load(t, settings)
	e := src.Evaluator("", "")
	tests := []struct {
		host  string
		port  int
		allow bool
		rule  string
	}{
		{"github.com", 22, true, "network.allowedDomains[0]"},
		{"GitHub.com.", 443, true, "network.allowedDomains[0]"},
		{"registry.npmjs.org", 443, true, "network.allowedDomains[1]"},
		{"npmjs.org", 443, false, "default"},
		{"evil.npmjs.org", 443, false, "network.deniedDomains[0]"},
		{"example.org", 443, true, "network.allowedDomains[2]"},
		{"example.org", 80, false, "default"},
		{"169.254.169.254", 80, false, "default"},
	}
	for _, tc := range tests {
		for _, tg := range Targets {
			d := e.Connect(tc.host, tc.port, tg)
			if d.Allow != tc.allow || d.Rule.Key != tc.rule {
				t.Errorf("Connect(%s, %d) on %s = %v by %s, want %v by %s", tc.host, tc.port, tg, d.Allow, d.Rule.Key, tc.allow, tc.rule)
			}
		}
	}
	sock := e.Path("/var/run/docker.sock")
	if d := e.UnixSocket(sock, Linux); d.Allow {
		t.Errorf("UnixSocket on linux = allow, want deny: Linux cannot filter by path")
	}
	if d := e.UnixSocket(sock, MacOS); !d.Allow || d.Rule.Key != "network.allowUnixSockets[0]" {
		t.Errorf("UnixSocket on macos = %+v, want allow by network.allowUnixSockets[0]", d)
	}
	if d := e.UnixSocket(e.Path("/tmp/other.sock"), MacOS); d.Allow {
		t.Errorf("UnixSocket(/tmp/other.sock) on macos = allow, want deny")
	}
	all := load(t, `{"network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	d := all.Evaluator("", "").UnixSocket("/x.sock", Linux)
	if !d.Allow || d.Rule.Key != "network.allowAllUnixSockets" || d.Rule.Pos != "s.json:1:80" {
		t.Errorf("UnixSocket under allowAllUnixSockets = %+v, want allow by network.allowAllUnixSockets s.json:1:80", d)
	}
}

// TestWindowsGlobs: Windows reads [ ] literally unless * or ? is present.
func TestWindowsGlobs(t *testing.T) {
	e := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["/data/[ab]x"], "allowWrite": [], "denyWrite": []}}`).Evaluator("", "")
	if d := e.Read("/data/ax", Linux); d.Allow {
		t.Errorf("read /data/ax on linux = allow, want deny (the set [ab])")
	}
	if d := e.Read("/data/ax", Windows); !d.Allow {
		t.Errorf("read /data/ax on windows = deny, want allow ([ab] is literal there)")
	}
	if d := e.Read("/data/[ab]x", Windows); d.Allow {
		t.Errorf("read /data/[ab]x on windows = allow, want deny")
	}
}

// TestMacOSProfileOrder pins macOS answers that follow the order of the
// profile's rules.
func TestMacOSProfileOrder(t *testing.T) {
	settings := `{
  "network": {"allowedDomains": [], "deniedDomains": [], "allowMachLookup": ["com.apple.*"]},
  "filesystem": {
    "denyRead": ["./.env", "/tmp/cache", "/Users/*/proj/src", "/"],
    "allowRead": [".", "./.env", "/opt/*", "/usr/bin"],
    "allowWrite": ["./out/*", ".", "/tmp", "/srv/*"],
    "denyWrite": [{"path": "/tmp/x/../y", "literal": true}]
  }
}`
	src := load(t, settings)
	e := src.Evaluator("/Users/me", "/Users/me/proj")
	tests := []struct {
		op, path string
		allow    bool
		rule     string
	}{
		// A literal deny inside a literal allow is repeated after the
		// allows: allowRead of the same path does not reopen it.
		{"read", "./.env", false, "filesystem.denyRead[0]"},
		// /tmp is /private/tmp to Seatbelt.
		{"read", "/private/tmp/cache/f", false, "filesystem.denyRead[1]"},
		// A write root of /tmp itself: the reference keeps "/tmp",
		// which Seatbelt never sees (it adopts a realpath into /private
		// only strictly below /tmp and /var).
		{"write", "/private/tmp/f", false, "default"},
		// "/Users/*/proj/src" is written from another root than "." and
		// "./.env": the profile cannot carve them out.
		{"read", "./src/a.go", false, "filesystem.denyRead[2]"},
		// The root directory itself stays readable; a glob allow opens
		// its exact matches, not their contents.
		{"read", "/", true, "filesystem.denyRead[3]"},
		{"read", "/opt/x", true, "filesystem.allowRead[2]"},
		{"read", "/opt/x/y", false, "filesystem.denyRead[3]"},
		{"read", "/usr/bin/ls", true, "filesystem.allowRead[3]"},
		{"write", "./out/x", true, "filesystem.allowWrite[0]"},
		{"write", "./out/x/y", true, "filesystem.allowWrite[1]"},
		{"write", "/srv/a", true, "filesystem.allowWrite[3]"},
		{"write", "/srv/a/b", false, "default"},
		// ".." is folded as the kernel does.
		{"write", "/tmp/y", false, "filesystem.denyWrite[0]"},
		// A deeper .vscode is protected inside, not itself.
		{"write", "./a/.vscode", true, "filesystem.allowWrite[1]"},
		{"write", "./a/.vscode/settings.json", false, "mandatory"},
		{"write", "./.vscode", false, "mandatory"},
		{"write", "./a/.git/hooks", true, "filesystem.allowWrite[1]"},
		{"write", "./a/.git/hooks/pre-commit", false, "mandatory"},
	}
	for _, tc := range tests {
		p := e.Path(tc.path)
		d := e.Read(p, MacOS)
		if tc.op == "write" {
			d = e.Write(p, MacOS)
		}
		if d.Allow != tc.allow || d.Rule.Key != tc.rule {
			t.Errorf("%s %s on macos = %v by %s (%s), want %v by %s", tc.op, tc.path, d.Allow, d.Rule.Key, d.Why, tc.allow, tc.rule)
		}
		if deep := strings.HasSuffix(tc.path, "/a/.vscode") || strings.HasSuffix(tc.path, "/a/.git/hooks"); deep != strings.Contains(d.Why, "the directory itself may be created, renamed or removed") {
			t.Errorf("%s %s on macos: %q, want the deeper protected directory named: %v", tc.op, tc.path, d.Why, deep)
		}
	}
	found := false
	for _, l := range e.Summary([]Target{MacOS}) {
		if l.Subject == "/ (everything not listed)" && l.Allow {
			t.Errorf("summary: everything not listed = allow (%s), want deny: the policy denies /", l.Why)
		}
		if l.Subject == "weaker network isolation" {
			found = true
			if !l.Allow || l.Rule.Key != "network.allowMachLookup" {
				t.Errorf("weaker network isolation = %+v, want allowed by network.allowMachLookup (com.apple.* opens trustd)", l.Decision)
			}
		}
	}
	if !found {
		t.Error("no weaker network isolation line")
	}
}

// TestMacOSRootIsText: the directory behind ${CWD} is text in a pattern,
// as the profile's CWD_REGEX makes it, never a set.
func TestMacOSRootIsText(t *testing.T) {
	e := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["./*.pem"], "allowWrite": [], "denyWrite": []}}`).Evaluator("/h", "/h/[WIP] a+b")
	for p, allow := range map[string]bool{"/h/[WIP] a+b/k.pem": false, "/h/W a+b/k.pem": true, "/h/[WIP] a+b/k.txt": true} {
		if d := e.Read(p, MacOS); d.Allow != allow {
			t.Errorf("read %s on macos = %v (%s), want %v", p, d.Allow, d.Why, allow)
		}
	}
}

// TestWindowsReading: the Windows answers for a policy from the Windows
// reading compare names as NTFS and the ACL helper do.
func TestWindowsReading(t *testing.T) {
	settings := `{
  "network": {"allowedDomains": [], "deniedDomains": []},
  "filesystem": {
    "denyRead": ["C:\\proj\\.env", "C:\\", "C:\\a\\**\\vendor"],
    "allowRead": ["C:\\tools", "C:\\a\\vendor\\keep", "C:\\**\\pub"],
    "allowWrite": ["%HOMEDRIVE%\\data", "~\\.aws\\out", "C:\\proj"],
    "denyWrite": []
  },
  "credentials": {"files": [{"path": "~\\.aws", "mode": "deny"}]}
}`
	src, diags, err := Load("s.json", []byte(settings), schema.Options{OS: schema.OSWindows})
	if err != nil || diags != nil {
		t.Fatalf("Load: %v %v", err, diags)
	}
	e := src.Evaluator(`C:\Users\me`, `C:\proj`)
	tests := []struct {
		op, path string
		allow    bool
		rule     string
	}{
		{"read", `C:\PROJ\.ENV`, false, "filesystem.denyRead[0]"},               // names ignore case
		{"read", `C:\Windows\x`, false, "filesystem.denyRead[1]"},               // C:\ covers its drive
		{"read", `C:\tools\bin`, true, "filesystem.allowRead[0]"},               // an allow below C:\ reopens
		{"write", `C:\data\x`, true, "filesystem.allowWrite[0]"},                // %HOMEDRIVE% from Home
		{"write", `C:\Users\me\.aws\out\x`, false, "credentials.files[0].path"}, // no write root under a credential deny
		{"read", `C:\a\vendor\keep\y`, true, "filesystem.allowRead[1]"},
		{"read", `C:\a\vendor\keep\vendor\y`, false, "filesystem.denyRead[2]"}, // each match has its own deny
		{"read", `C:\a\pub\y`, true, "filesystem.allowRead[2]"},                // a pattern allow sits at its match
		{"read", `D:\x`, true, "default"},
	}
	for _, tc := range tests {
		p := e.Path(tc.path)
		d := e.Read(p, Windows)
		if tc.op == "write" {
			d = e.Write(p, Windows)
		}
		if d.Allow != tc.allow || d.Rule.Key != tc.rule {
			t.Errorf("%s %s (%s) on windows = %v by %s (%s), want %v by %s", tc.op, tc.path, p, d.Allow, d.Rule.Key, d.Why, tc.allow, tc.rule)
		}
	}
	if d := e.Write(e.Path(`C:\proj\.git\hooks\pre-commit`), Windows); !d.Allow || !strings.Contains(d.Why, "no mandatory write denies") {
		t.Errorf("write .git/hooks/pre-commit on windows = %v (%s), want allow, saying that Windows has no mandatory write denies", d.Allow, d.Why)
	}
	if p := e.Path(`c:\proj\x`); p != "c:/proj/x" && p != "C:/proj/x" {
		t.Errorf(`Path(c:\proj\x) = %q, want C:/proj/x`, p)
	}
	off, diags, err := Load("s.json", []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"disabled": true, "denyRead": [], "allowWrite": ["C:\\proj"], "denyWrite": []}}`), schema.Options{OS: schema.OSWindows})
	if err != nil || diags != nil {
		t.Fatalf("Load: %v %v", err, diags)
	}
	oe := off.Evaluator(`C:\Users\me`, `C:\proj`)
	if d := oe.Write(oe.Path(`C:\proj\x`), Windows); d.Allow {
		t.Errorf("write under filesystem.disabled on windows = allow (%s), want deny: no write roots under the write-restricted token", d.Why)
	}
}

// TestMetacharacterRoots: the directory behind ${HOME} or ${CWD} is a
// name in a pattern, never a set or a wildcard, on every target (as the
// resolve step and the profile take it).
func TestMetacharacterRoots(t *testing.T) {
	src := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["**/*.pem", "~/.a*/cred*"], "allowWrite": ["."], "denyWrite": []}}`)
	e := src.Evaluator("/h?me", "/h?me/[x] proj*")
	for _, tt := range []struct {
		path  string
		allow bool
	}{
		{"/h?me/[x] proj*/keys/a.pem", false},
		{"/h?me/x proj/keys/b.pem", true}, // what the root would mean as a pattern
		{"/h?me/.aws/credentials", false},
		{"/hXme/.aws/credentials", true},
	} {
		for _, tg := range []Target{Linux, MacOS} {
			if d := e.Read(tt.path, tg); d.Allow != tt.allow {
				t.Errorf("%s read %s = %v (%s), want %v", tg, tt.path, d.Allow, d.Why, tt.allow)
			}
		}
	}
}

// TestUpstreamRoutes: an allowed host's answer says where it goes (the
// mitmProxy socket, the parent proxy, or a direct dial through the guard),
// and external proxy ports qualify every verdict of srt's proxies and add
// a line for the port they expose.
func TestUpstreamRoutes(t *testing.T) {
	src := load(t, `{"network": {"allowedDomains": ["*.corp.example", "direct.example", "localhost"], "deniedDomains": [],
  "mitmProxy": {"socketPath": "/run/mitm.sock", "domains": ["*.inspect.corp.example"]},
  "parentProxy": {"http": "http://proxy.corp.example:3128", "noProxy": ".direct.example"}},
  "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	e := src.Evaluator("", "")
	for host, want := range map[string]string{
		"a.inspect.corp.example": "sent to the mitmProxy on /run/mitm.sock",
		"app.corp.example":       "sent through network.parentProxy",
		"direct.example":         "dialled only at an address that passes the guard",
		"localhost":              "a localhost name is dialled only at a loopback address",
	} {
		if d := e.Connect(host, 443, Linux); !d.Allow || !strings.Contains(d.Why, want) || strings.Contains(d.Why, "srt runs no proxy") {
			t.Errorf("%s: %+v, want %q", host, d, want)
		}
	}
	ports := load(t, `{"network": {"allowedDomains": ["a.example"], "deniedDomains": [], "httpProxyPort": 8080},
  "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	e = ports.Evaluator("", "")
	for _, host := range []string{"a.example", "b.example"} {
		if d := e.Connect(host, 443, Linux); !strings.Contains(d.Why, "this is srt's SOCKS proxy's verdict: HTTP and HTTPS proxy traffic goes to the user's proxy on host loopback port 8080") {
			t.Errorf("%s with httpProxyPort: %+v", host, d)
		}
	}
	var found bool
	for _, l := range e.Summary([]Target{Linux}) {
		if l.Kind == "connect" && l.Subject == "host loopback port 8080" {
			found = l.Allow && l.Rule.Key == "network.httpProxyPort" && l.Rule.Pos == "s.json:1:85" && strings.Contains(l.Why, "per-command lists and the ask callback do not apply")
		}
		if l.Subject == "local binding (listen on localhost)" && !strings.Contains(l.Why, "relay to the external proxy port 8080 on the host's loopback, and to nothing else there") {
			t.Errorf("local binding: %s", l.Why)
		}
	}
	if !found {
		t.Error("no true line for the external port in the summary")
	}
}

// Load compiles a settings file for the tests as review/source does
// (which imports this package).
func Load(name string, data []byte, opts schema.Options) (*Source, schema.Diagnostics, error) {
	p, diags, err := compiler.CompileFile(name, data, opts)
	if err != nil || diags != nil {
		return nil, diags, err
	}
	return &Source{Policy: p}, nil, nil
}

// TestInjectsBody: a masked credential's real value goes into request
// bodies only for the inject hosts bodyInjectHosts lists (a wildcard for
// the names under it), and InjectScope says where in a request it goes.
func TestInjectsBody(t *testing.T) {
	e := load(t, `{"network": {"allowedDomains": ["api.example.com", "uploads.example.com", "*.cdn.example.com", "pypi.org"], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [
			{"name": "A", "mode": "mask", "injectHosts": ["api.example.com", "uploads.example.com", "*.cdn.example.com"], "bodyInjectHosts": ["uploads.example.com", "*.cdn.example.com"]},
			{"name": "B", "mode": "mask", "injectHosts": ["api.example.com"]}]}}`).Evaluator("", "")
	cs := e.Credentials()
	a, b := cs[0], cs[1]
	for _, tc := range []struct {
		host string
		want bool
		rule string
	}{
		{"uploads.example.com", true, "credentials.envVars[0].bodyInjectHosts[0]"},
		{"x.cdn.example.com", true, "credentials.envVars[0].bodyInjectHosts[1]"},
		{"api.example.com", false, "credentials.envVars[0]"},
		{"pypi.org", false, "credentials.envVars[0]"},
	} {
		if d := e.InjectsBody(a.Masking, a.Origin, tc.host); d.Allow != tc.want || d.Rule.Key != tc.rule {
			t.Errorf("InjectsBody(A, %s) = %v by %s (%s), want %v by %s", tc.host, d.Allow, d.Rule.Key, d.Why, tc.want, tc.rule)
		}
	}
	if got, want := e.InjectScope(a.Masking), "the proxy sends the real value to api.example.com, uploads.example.com, *.cdn.example.com (injectHosts), in the header fields that carry credentials, and to uploads.example.com, *.cdn.example.com also in request bodies and every other header field (bodyInjectHosts): whatever those hosts keep, the command can read back"; got != want {
		t.Errorf("InjectScope(A) = %q, want %q", got, want)
	}
	if got, want := e.InjectScope(b.Masking), "the proxy sends the real value to api.example.com (injectHosts), only in the request header fields that carry credentials (Authorization, Cookie, X-Api-Key, …), never in a body or a URL"; got != want {
		t.Errorf("InjectScope(B) = %q, want %q", got, want)
	}
}
