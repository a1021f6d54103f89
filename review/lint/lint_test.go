package lint

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
)

func load(t *testing.T, settings string) *query.Source {
	t.Helper()
	src, diags, err := source.Load("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("Load: %v %v", err, diags)
	}
	return src
}

// codes returns "CODE key" for each finding, sorted.
func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+" "+f.Origin.Key)
	}
	sort.Strings(out)
	return out
}

func TestRules(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		project  bool
		want     []string
	}{
		{"clean project", `{"network": {"allowedDomains": ["github.com", "*.npmjs.org"], "deniedDomains": ["169.254.169.254"]},
			"filesystem": {"denyRead": ["~/.ssh", "~/.aws"], "allowWrite": ["."], "denyWrite": []}}`, true, nil},
		{"writes", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": ["~", "/", "~/.local", "/usr/local/bin", "."], "denyWrite": ["~/.local/bin", "."]}}`, false,
			[]string{"SRT101 filesystem.allowWrite[0]", "SRT102 filesystem.allowWrite[1]", "SRT103 filesystem.allowWrite[3]",
				"SRT141 filesystem.allowWrite[0]", "SRT141 filesystem.allowWrite[2]", "SRT141 filesystem.allowWrite[3]", "SRT141 filesystem.allowWrite[4]",
				"SRT160 filesystem.denyWrite[1]"}},
		{"sockets and switches", `{"network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true,
			"allowUnixSockets": ["/var/run/docker.sock", "~/.ssh/agent.sock", "/tmp/x.sock", "/run/*.sock"]},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
			"allowAppleEvents": true, "allowNestedUserNamespaces": true, "enableWeakerNestedSandbox": true, "enableWeakerNetworkIsolation": true}`, true,
			[]string{"SRT110 network.allowUnixSockets[0]", "SRT110 network.allowUnixSockets[1]", "SRT111 network.allowAllUnixSockets",
				"SRT120 allowAppleEvents", "SRT120 allowNestedUserNamespaces", "SRT120 enableWeakerNestedSandbox", "SRT120 enableWeakerNetworkIsolation",
				"SRT170 network.allowUnixSockets[3]"}},
		{"switches in the user's file", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "allowNestedUserNamespaces": true}`, false, nil},
		{"network", `{"network": {"allowedDomains": ["*.github.io", "api.github.com", "*.github.com", "github.com:443", "GitHub.com:443", "x.evil.org", "*.evil.org"],
			"deniedDomains": ["*.evil.org", "127.1", "evil.org"]},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`, false,
			[]string{"SRT130 network.allowedDomains[0]", "SRT140 network.allowedDomains[5]", "SRT140 network.allowedDomains[6]",
				"SRT141 network.allowedDomains[1]",
				"SRT150 network.allowedDomains[4]", "SRT180 network.deniedDomains[1]"}},
		{"paths", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~/.ssh", "~/.ssh", "~/.ssh/keys", "**/.env", "./data/[ab]", "/**/*.pem", "~/x"],
				"allowRead": ["/etc", "~/x"], "allowWrite": ["."], "denyWrite": ["/etc/hosts"]}}`, false,
			[]string{"SRT140 filesystem.allowRead[0]", "SRT141 filesystem.denyRead[2]", "SRT150 filesystem.denyRead[1]",
				"SRT170 filesystem.denyRead[4]", "SRT170 filesystem.denyRead[5]", "SRT171 filesystem.denyRead[3]", "SRT171 filesystem.denyRead[4]", "SRT171 filesystem.denyRead[5]",
				"SRT180 filesystem.denyRead[6]", "SRT180 filesystem.denyWrite[0]"}},
		{"trailing separator", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["/data/in", "build/*/"], "allowRead": ["/data/in/*/", "/data/in/a"], "allowWrite": ["./out/*/"], "denyWrite": []}}`, false,
			[]string{"SRT170 filesystem.allowRead[0]", "SRT170 filesystem.allowWrite[0]", "SRT171 filesystem.denyRead[1]"}},
		{"mask without TLS", `{"network": {"allowedDomains": ["api.example.com"], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
			"credentials": {"allowPlaintextInject": true, "envVars": [{"name": "TOKEN", "mode": "mask"}]}}`, false,
			[]string{"SRT190 credentials.envVars[0]"}},
		{"inject scope and exposed credential files", `{"network": {"allowedDomains": ["api.github.com", "pypi.org", "*.githubusercontent.com"], "deniedDomains": [], "tlsTerminate": {}},
			"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": ["./.tok2"]},
			"credentials": {"files": [{"path": "./secrets/netrc", "mode": "deny"}, {"path": "~/.tok", "mode": "mask", "injectHosts": ["api.github.com"]},
				{"path": "./.tok2", "mode": "mask", "injectHosts": ["api.github.com"]}],
				"envVars": [{"name": "GH_TOKEN", "mode": "mask"}, {"name": "X", "mode": "mask", "injectHosts": ["*.githubusercontent.com"]},
					{"name": "Y", "mode": "mask", "injectHosts": ["api.github.com"]}]}}`, false,
			[]string{"SRT191 credentials.envVars[0]", "SRT191 credentials.envVars[1]", "SRT193 credentials.files[0].path"}},
		{"allow under /etc or /tmp itself on macOS", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": ["/etc/app", "/tmp", "/var/tmp/x"], "denyWrite": []}}`, false,
			[]string{"SRT172 filesystem.allowWrite[0]", "SRT172 filesystem.allowWrite[1]"}},
		{"body injection", `{"network": {"allowedDomains": ["api.example.com", "uploads.example.com"], "deniedDomains": [], "tlsTerminate": {}},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
			"credentials": {"envVars": [{"name": "TOKEN", "mode": "mask", "injectHosts": ["api.example.com", "uploads.example.com"], "bodyInjectHosts": ["uploads.example.com"]},
				{"name": "OTHER", "mode": "mask", "injectHosts": ["api.example.com"], "bodyInjectHosts": []}]}}`, false,
			[]string{"SRT194 credentials.envVars[0].bodyInjectHosts[0]"}},
		{"every allowed host", `{"network": {"allowedDomains": ["api.github.com", "pypi.org"], "deniedDomains": [], "tlsTerminate": {}},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
			"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask"}]}}`, false,
			[]string{"SRT192 credentials.envVars[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Lint(load(t, tc.settings), Options{ProjectLocal: tc.project})
			if diff := cmp.Diff(tc.want, codes(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
				for _, f := range got {
					t.Log(f)
				}
			}
			for _, f := range got {
				if f.Origin.Pos == "" && !strings.Contains(f.Origin.Key, ".") && f.Origin.Key != "allowAppleEvents" {
					t.Errorf("%s has no position", f)
				}
			}
		})
	}
}

func TestCodesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.Code] || seen[r.Name] {
			t.Errorf("duplicate rule %s %s", r.Code, r.Name)
		}
		seen[r.Code], seen[r.Name] = true, true
	}
}

// TestHostRules: with the host's home and working directories and what
// exists there, allowWrite directories not there yet and a hidden working
// directory are reported.
func TestHostRules(t *testing.T) {
	src := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["~/.ssh"], "allowRead": [], "allowWrite": [".", "~/.npm", "~/go/pkg", "/opt/cache", "~/.ssh/x"], "denyWrite": []}}`)
	exists := func(p string) bool { return p == "/home/me" || p == "/home/me/proj" || p == "/home/me/go/pkg" }
	got := Lint(src, Options{Home: "/home/me", Cwd: "/home/me/proj", Exists: exists})
	want := []string{"SRT105 filesystem.allowWrite[1]", "SRT106 filesystem.allowWrite[3]", "SRT106 filesystem.allowWrite[4]"}
	if diff := cmp.Diff(want, codes(got)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, f := range got {
		t.Log(f)
	}
	if got := Lint(src, Options{Home: "/home/me", Cwd: "/home/me/proj"}); len(got) != 0 {
		t.Errorf("without Exists: %v", got)
	}
	hidden := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["~"], "allowWrite": [], "denyWrite": []}}`)
	if got := codes(Lint(hidden, Options{Home: "/home/me", Cwd: "/home/me/proj"})); len(got) != 1 || got[0] != "SRT107 filesystem.denyRead[0]" {
		t.Errorf("hidden working directory: %v", got)
	}
}

// TestInjectHostsNamedOnce: a credential without injectHosts names the
// allowed hosts it goes to up to ten, then how many more, so that lint of
// many credentials and hosts is not their product.
func TestInjectHostsNamedOnce(t *testing.T) {
	var hosts, wild []string
	for i := range 12 {
		hosts = append(hosts, fmt.Sprintf("%q", fmt.Sprintf("h%02d.example", i)))
		wild = append(wild, fmt.Sprintf("%q", fmt.Sprintf("*.w%02d.example", i)))
	}
	for _, tc := range []struct {
		allowed []string
		code    string
		want    string
	}{
		{hosts, "SRT192", "(h00.example, h01.example, h02.example, h03.example, h04.example, h05.example, h06.example, h07.example, h08.example, h09.example and 2 more (all of network.allowedDomains))"},
		{hosts[:10], "SRT192", "(h00.example, h01.example, h02.example, h03.example, h04.example, h05.example, h06.example, h07.example, h08.example, h09.example):"},
		{wild, "SRT191", "under *.w00.example, *.w01.example, *.w02.example, *.w03.example, *.w04.example, *.w05.example, *.w06.example, *.w07.example, *.w08.example, *.w09.example and 2 more (all of network.allowedDomains):"},
	} {
		got := Lint(load(t, `{"network": {"allowedDomains": [`+strings.Join(tc.allowed, ", ")+`], "deniedDomains": [], "tlsTerminate": {}},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
			"credentials": {"envVars": [{"name": "A", "mode": "mask"}, {"name": "B", "mode": "mask"}]}}`), Options{})
		n := 0
		for _, f := range got {
			if f.Code == tc.code {
				n++
				if !strings.Contains(f.Message, tc.want) {
					t.Errorf("%s: %q lacks %q", tc.code, f.Message, tc.want)
				}
			}
		}
		if n != 2 {
			t.Errorf("%d %s findings, want one per credential: %v", n, tc.code, got)
		}
	}
}
