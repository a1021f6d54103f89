package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const base = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`

// patched deep-merges patch (JSON) into base: objects merge key by key,
// everything else is replaced, as in the reference's conformance cases.
func patched(t *testing.T, patch string) []byte {
	t.Helper()
	var b, p map[string]any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatalf("bad patch %s: %v", patch, err)
	}
	merge(b, p)
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// TestVerdicts covers the grammar beyond the reference's own cases: every
// rule of docs/reference.md#grammar and docs/reference.md#cross-field-rules with values on both sides of its edge.
func TestVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		os    OS
		patch string
		// wantPaths are the paths of the diagnostics, in order; nil means
		// valid.
		wantPaths []string
	}{
		// docs/reference.md#settings-keys: integers by value, no nulls, no coercion.
		{"int 3.0", "", `{"mandatoryDenySearchDepth":3.0}`, nil},
		{"int 1e1", "", `{"mandatoryDenySearchDepth":1e1}`, nil},
		{"int 2.5", "", `{"mandatoryDenySearchDepth":2.5}`, []string{"mandatoryDenySearchDepth"}},
		{"int 0", "", `{"mandatoryDenySearchDepth":0}`, []string{"mandatoryDenySearchDepth"}},
		{"int string", "", `{"mandatoryDenySearchDepth":"3"}`, []string{"mandatoryDenySearchDepth"}},
		{"null optional", "", `{"allowPty":null}`, []string{"allowPty"}},
		{"bool string", "", `{"allowPty":"true"}`, []string{"allowPty"}},
		{"null required", "", `{"network":{"allowedDomains":null}}`, []string{"network.allowedDomains"}},

		// docs/reference.md#grammar host-only lists: bare IPv6 yes, brackets no.
		{"host bare ipv6", "", `{"network":{"tlsTerminate":{"excludeDomains":["::1","fe80::1%eth0"]}}}`, nil},
		{"host bracketed ipv6", "", `{"network":{"tlsTerminate":{"excludeDomains":["[::1]"]}}}`, []string{"network.tlsTerminate.excludeDomains[0]"}},
		{"host quirks", "", `{"network":{"mitmProxy":{"socketPath":"/s","domains":["a..b","exa mple.com","1.2.3","*.*.example.com","_srv.example.com","bücher.example"]}}}`, nil},
		{"host trailing dot", "", `{"network":{"mitmProxy":{"socketPath":"/s","domains":["example.com."]}}}`, []string{"network.mitmProxy.domains[0]"}},
		{"host port", "", `{"network":{"mitmProxy":{"socketPath":"/s","domains":["example.com:443"]}}}`, []string{"network.mitmProxy.domains[0]"}},
		{"mitm empty domains", "", `{"network":{"mitmProxy":{"socketPath":"/s","domains":[]}}}`, []string{"network.mitmProxy.domains"}},

		// docs/reference.md#grammar bracket quirks.
		{"bracket names", "", `{"network":{"allowedDomains":["[example.com]","[1.2.3.4]:80","[127.1]","[*.example.com]","[EXAMPLE.com]:8080","[a.b","[a.b:80]","[user@a.b]","[a.b/x]","[2852039166]","[a]b.c","[::ffff:1.2.3.4]"]}}`, nil},
		{"bracket empty", "", `{"network":{"allowedDomains":["[]"]}}`, []string{"network.allowedDomains[0]"}},
		{"bracket trailing dot", "", `{"network":{"allowedDomains":["[x.]"]}}`, []string{"network.allowedDomains[0]"}},
		{"bracket bad rest", "", `{"network":{"allowedDomains":["[::1]x"]}}`, []string{"network.allowedDomains[0]"}},
		{"bracket zone", "", `{"network":{"allowedDomains":["[fe80::1%eth0]:22"]}}`, nil},
		{"allow upper case", "", `{"network":{"allowedDomains":["Example.COM:443"]}}`, nil},

		// docs/reference.md#grammar deny entries.
		{"deny star port", "", `{"network":{"deniedDomains":["*","*:22","*:65535","[*]"]}}`, nil},
		{"deny star 0", "", `{"network":{"deniedDomains":["*:0"]}}`, []string{"network.deniedDomains[0]"}},
		{"deny *.com", "", `{"network":{"deniedDomains":["*.com"]}}`, []string{"network.deniedDomains[0]"}},

		// docs/reference.md#grammar address ranges.
		{"ranges", "", `{"network":{"deniedResolvedAddresses":["10.0.0.0/08","0.0.0.0/0","::ffff:10.0.0.0/104","::ffff:10.0.0.0","fe80::1%eth0/64","::/0","2001:db8::/128","10.0.0.1%x"]}}`, nil},
		{"range mapped /95", "", `{"network":{"deniedResolvedAddresses":["::ffff:10.0.0.0/95"]}}`, []string{"network.deniedResolvedAddresses[0]"}},
		{"range empty prefix", "", `{"network":{"deniedResolvedAddresses":["10.0.0.0/"]}}`, []string{"network.deniedResolvedAddresses[0]"}},
		{"range leading zero octet", "", `{"network":{"deniedResolvedAddresses":["010.0.0.0"]}}`, []string{"network.deniedResolvedAddresses[0]"}},
		{"range /129", "", `{"network":{"deniedResolvedAddresses":["::/129"]}}`, []string{"network.deniedResolvedAddresses[0]"}},
		{"range name", "", `{"network":{"deniedResolvedAddresses":["example.com"]}}`, []string{"network.deniedResolvedAddresses[0]"}},
		{"range brackets", "", `{"network":{"deniedResolvedAddresses":["[::1]"]}}`, []string{"network.deniedResolvedAddresses[0]"}},

		// docs/reference.md#grammar Mach names.
		{"mach edge", "", `{"network":{"allowMachLookup":["","*","a*"]}}`, nil},
		{"mach **", "", `{"network":{"allowMachLookup":["**"]}}`, []string{"network.allowMachLookup[0]"}},

		// docs/reference.md#grammar extract: ECMAScript, not RE2.
		{"extract lookbehind", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"T","mode":"mask","extract":"(?<=token=)(\\w+)"}]}}`, nil},
		{"extract named", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"T","mode":"mask","extract":"(?<tok>\\w+)\\k<tok>"}]}}`, nil},
		{"extract backwards range", "", `{"credentials":{"envVars":[{"name":"T","mode":"deny","extract":"([z-a])"}]}}`, []string{"credentials.envVars[0].extract"}},
		{"extract no group", "", `{"credentials":{"envVars":[{"name":"T","mode":"deny","extract":"(?=a)b"}]}}`, []string{"credentials.envVars[0].extract"}},

		// docs/reference.md#grammar URLs.
		{"urls", "", `{"network":{"parentProxy":{"http":"proxy:3128","https":"socks5://h:1080","noProxy":"not a url"}}}`, nil},
		{"url relative", "", `{"network":{"parentProxy":{"http":"not a url"}}}`, []string{"network.parentProxy.http"}},
		{"url empty host", "", `{"network":{"parentProxy":{"https":"http://"}}}`, []string{"network.parentProxy.https"}},
		{"url bad port", "", `{"network":{"parentProxy":{"http":"http://proxy:99999"}}}`, []string{"network.parentProxy.http"}},

		// docs/reference.md#grammar and docs/reference.md#cross-field-rules with both rule sets.
		{"uuid", "", `{"windows":{"sublayerGuid":"4F3C2A10-8B1E-4C8D-9A57-2B0E6F1D3C42"}}`, nil},
		{"uuid bad", "", `{"windows":{"wfpSublayerGuid":"4f3c2a10"}}`, []string{"windows.wfpSublayerGuid"}},
		{"posix drive path", OSPosix, `{"bwrapPath":"C:\\bwrap.exe"}`, []string{"bwrapPath"}},
		{"windows drive path", OSWindows, `{"bwrapPath":"C:\\bwrap.exe","socatPath":"\\\\srv\\share\\socat","javaAgentJarPath":"/a.jar"}`, nil},
		{"windows relative drive", OSWindows, `{"bwrapPath":"C:bwrap.exe"}`, []string{"bwrapPath"}},
		{"posix inert", OSPosix, `{"filesystem":{"denyRead":["/w/[WIP]/","~/x/*/","build/*/"]}}`, []string{"filesystem.denyRead[0]", "filesystem.denyRead[1]"}},
		{"windows inert", OSWindows, `{"filesystem":{"denyWrite":["/w/[WIP]/","%USERPROFILE%\\*\\","C:\\data\\*\\"]}}`, []string{"filesystem.denyWrite[2]"}},
		{"inert disabled", OSPosix, `{"filesystem":{"disabled":true,"denyRead":["/data/*/"]}}`, nil},
		{"inert allow list", OSPosix, `{"filesystem":{"allowRead":["/data/*/"],"allowWrite":["/data/*/"]}}`, nil},
		{"inert credential deny", OSPosix, `{"credentials":{"files":[{"path":"~/*/","mode":"deny"}]}}`, []string{"credentials.files[0].path"}},

		// docs/reference.md#grammar path entries.
		{"literal marker", "", `{"filesystem":{"allowWrite":[{"path":"/x/**","literal":true}]}}`, nil},
		{"literal extra key", "", `{"filesystem":{"allowWrite":[{"path":"/x","literal":true,"why":"x"}]}}`, []string{"filesystem.allowWrite[0].why"}},
		{"literal missing", "", `{"filesystem":{"allowWrite":[{"path":"/x"}]}}`, []string{"filesystem.allowWrite[0].literal"}},
		{"path number", "", `{"filesystem":{"allowWrite":[3]}}`, []string{"filesystem.allowWrite[0]"}},

		// docs/reference.md#cross-field-rules C8: AWS pairs.
		{"aws ok", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"A","mode":"mask"},{"name":"S","mode":"mask"}],"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"S"}]}}`, nil},
		{"aws same var twice", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"A","mode":"mask"}],"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"A"}]}}`, []string{"credentials.awsPairs[0].secretAccessKeyVar"}},
		{"aws not masked", "", `{"credentials":{"envVars":[{"name":"A","mode":"deny"}],"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"S"}]}}`, []string{"credentials.awsPairs[0].accessKeyIdVar", "credentials.awsPairs[0].secretAccessKeyVar"}},
		{"aws extract", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"A","mode":"mask","extract":"(x)"},{"name":"S","mode":"mask"}],"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"S"}]}}`, []string{"credentials.awsPairs[0].accessKeyIdVar"}},
		{"aws one variable in three slots", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"A","mode":"mask"},{"name":"S","mode":"mask"},{"name":"T","mode":"mask"}],"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"S"},{"accessKeyIdVar":"T","secretAccessKeyVar":"A","sessionTokenVar":"A"}]}}`, []string{"credentials.awsPairs[1].secretAccessKeyVar", "credentials.awsPairs[1].sessionTokenVar"}},
		{"aws names that look hidden to CUE", "", `{"network":{"tlsTerminate":{}},"credentials":{"envVars":[{"name":"_A","mode":"mask"},{"name":"_B","mode":"mask","decode":"jwt"}],"awsPairs":[{"accessKeyIdVar":"_A","secretAccessKeyVar":"_B","sessionTokenVar":"_S"}]}}`, []string{"credentials.awsPairs[0].secretAccessKeyVar", "credentials.awsPairs[0].sessionTokenVar"}},
		{"aws strict", "", `{"credentials":{"awsPairs":[{"accessKeyIdVar":"A","secretAccessKeyVar":"S","region":"x"}]}}`, []string{"credentials.awsPairs[0].accessKeyIdVar", "credentials.awsPairs[0].region", "credentials.awsPairs[0].secretAccessKeyVar"}},

		// docs/reference.md#cross-field-rules C10, C11.
		{"ca key only", "", `{"network":{"tlsTerminate":{"caKeyPath":"/k"}}}`, []string{"network.tlsTerminate.caKeyPath"}},
		{"port range ok", "", `{"windows":{"proxyPortRange":[1,65]}}`, nil},
		{"port range wide", "", `{"windows":{"proxyPortRange":[1,66]}}`, []string{"windows.proxyPortRange"}},
		{"port range reversed", "", `{"windows":{"proxyPortRange":[10,5]}}`, []string{"windows.proxyPortRange"}},
		{"port range three", "", `{"windows":{"proxyPortRange":[1,2,3]}}`, []string{"windows.proxyPortRange"}},

		// Keys that take any name, and keys that never appear in a file.
		{"ignoreViolations keys", "", `{"ignoreViolations":{"*":[""],"git push":["/usr/bin/nc"]}}`, nil},
		{"ignoreViolations value", "", `{"ignoreViolations":{"git push":"/usr/bin/nc"}}`, []string{`ignoreViolations["git push"]`}},
		{"filterRequest", "", `{"network":{"filterRequest":null}}`, []string{"network.filterRequest"}},
		{"deniedDomainReasons empty", "", `{"network":{"deniedDomainReasons":{"x.com":""}}}`, []string{`network.deniedDomainReasons["x.com"]`}},
		{"sandboxUser long", "", `{"windows":{"sandboxUser":"abcdefghijklmnopqrstu"}}`, []string{"windows.sandboxUser"}},
		{"ripgrep empty command", "", `{"ripgrep":{"command":""}}`, nil},
		{"ripgrep no command", "", `{"ripgrep":{"args":[]}}`, []string{"ripgrep.command"}},

		// srt's resource limits: whole numbers in range, no other key.
		{"limits", "", `{"limits":{"memoryMiB":16,"processes":8,"cpuSeconds":1,"openFiles":16}}`, nil},
		{"limits max", "", `{"limits":{"memoryMiB":16777216,"processes":4194304,"cpuSeconds":31536000,"openFiles":1048576}}`, nil},
		{"limits empty", "", `{"limits":{}}`, nil},
		{"limits low", "", `{"limits":{"memoryMiB":15,"processes":7,"cpuSeconds":0,"openFiles":15}}`, []string{"limits.cpuSeconds", "limits.memoryMiB", "limits.openFiles", "limits.processes"}},
		{"limits high", "", `{"limits":{"memoryMiB":16777217,"processes":4194305,"cpuSeconds":31536001,"openFiles":1048577}}`, []string{"limits.cpuSeconds", "limits.memoryMiB", "limits.openFiles", "limits.processes"}},
		{"limits types", "", `{"limits":{"memoryMiB":"2G","processes":2.5,"cpuSeconds":null,"openFiles":true}}`, []string{"limits.cpuSeconds", "limits.memoryMiB", "limits.openFiles", "limits.processes"}},
		{"limits unknown", "", `{"limits":{"memory":1024}}`, []string{"limits.memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Options{OS: tt.os}.Load("s.json", patched(t, tt.patch))
			var got []string
			for _, d := range diags {
				got = append(got, d.PathString())
			}
			if diff := cmp.Diff(tt.wantPaths, got); diff != "" {
				t.Errorf("Load(%s) paths (-want +got):\n%s\ndiagnostics:\n%v", tt.patch, diff, diags)
			}
		})
	}
}

// TestDiagnostics pins complete messages and positions, and shows that all
// problems of a file are reported together.
func TestDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"empty", "", []string{"s.json:1:1: invalid JSON: the file is empty: delete it, or write a settings object in it"}},
		{"whitespace", " \n\t ", []string{"s.json:1:1: invalid JSON: the file is empty: delete it, or write a settings object in it"}},
		{"bom", "\ufeff" + base, []string{"s.json:1:1: invalid JSON: the file starts with a UTF-8 byte order mark, which JSON does not allow: save it without a BOM"}},
		{"invalid utf8", "{\"a\":\"\xff\"}", []string{"s.json:1:7: invalid JSON: the file is not valid UTF-8: save it as UTF-8"}},
		{"array root", "[]", []string{"s.json:1:1: (root): the settings file must hold a JSON object, not an array: start it with {"}},
		{"null root", " null", []string{"s.json:1:2: (root): the settings file must hold a JSON object, not null: start it with {"}},
		{"trailing data", base + " {}", []string{"s.json:1:114: invalid JSON: unexpected '{' after the end of the JSON value: a settings file holds exactly one object"}},
		{"trailing comma", `{"a":1,}`, []string{"s.json:1:8: invalid JSON: trailing comma before '}'"}},
		{"comment", "{\n// x\n}", []string{"s.json:2:1: invalid JSON: unexpected '/': expected a key in double quotes"}},
		{"NaN", `{"a":NaN}`, []string{"s.json:1:6: invalid JSON: unexpected 'N': expected a value"}},
		{"single quotes", `{"a":'x'}`, []string{"s.json:1:6: invalid JSON: strings must use double quotes"}},
		{"unterminated", `{"a":"x`, []string{"s.json:1:8: invalid JSON: unterminated string"}},
		{"infinity", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"mandatoryDenySearchDepth":1e400}`, []string{"s.json:1:140: mandatoryDenySearchDepth: must be a whole number from 1 to 10 (got 1e400)"}},
		{"leading zero", `{"a":01}`, []string{"s.json:1:7: invalid JSON: invalid number: leading zeros are not allowed"}},
		{"duplicate", "{\"network\":{},\n \"network\":{}}", []string{`s.json:2:2: invalid JSON: duplicate key "network" (first at line 1, column 2): JSON.parse would silently keep only the last one; remove one of them`}},
		{"deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), []string{"s.json:1:66: invalid JSON: values are nested more than 64 deep"}},
		{"everything at once", `{
  "network": {
    "allowedDomains": ["example.com", "https://evil.com"],
    "deniedDomains": [],
    "allowLocalBinding": "yes"
  },
  "filesytem": {},
  "bwrapPath": "bwrap",
  "credentials": {"envVars": [{"name": "TOKEN", "mode": "mask"}]}
}`, []string{
			`s.json:1:1: filesystem: required key is missing: add "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}`,
			`s.json:3:39: network.allowedDomains[1]: must be a host name (example.com), a wildcard (*.example.com), localhost or a bracketed IPv6 address ([::1]), optionally followed by :port (1-65535 without leading zeros); no scheme or path (got "https://evil.com")`,
			`s.json:5:26: network.allowLocalBinding: must be a boolean (true or false), not "yes"`,
			`s.json:7:3: filesytem: unknown key "filesytem" (did you mean "filesystem"?)`,
			`s.json:8:16: bwrapPath: must be a non-empty absolute path (starting with /) (got "bwrap")`,
			`s.json:9:57: credentials.envVars[0].mode: "mask" needs network.tlsTerminate (even {}) so the real value is only injected into encrypted traffic, or credentials.allowPlaintextInject: true`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diags := Options{OS: OSPosix}.Load("s.json", []byte(tt.src))
			if s != nil {
				t.Errorf("Load returned settings for an invalid file")
			}
			var got []string
			for _, d := range diags {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingKeysOneRound: every required key a file lacks is reported at
// once, a missing object with its own required keys, so that adding what
// the messages say makes the file valid.
func TestMissingKeysOneRound(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`{}`, []string{
			`s.json:1:1: filesystem: required key is missing: add "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}`,
			`s.json:1:1: network: required key is missing: add "network": {"allowedDomains": [], "deniedDomains": []}`,
		}},
		{`{"network": {}}`, []string{
			`s.json:1:1: filesystem: required key is missing: add "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}`,
			`s.json:1:13: network.allowedDomains: required key is missing: add "allowedDomains": []`,
			`s.json:1:13: network.deniedDomains: required key is missing: add "deniedDomains": []`,
		}},
	}
	for _, tt := range tests {
		_, diags := Options{OS: OSPosix}.Load("s.json", []byte(tt.src))
		var got []string
		var doc map[string]any
		json.Unmarshal([]byte(tt.src), &doc)
		for _, d := range diags {
			got = append(got, d.String())
			// Do what the message says, in the object at its path.
			_, add, ok := strings.Cut(d.String(), "required key is missing: add ")
			if !ok {
				t.Fatalf("%s", d)
			}
			var kv map[string]any
			if err := json.Unmarshal([]byte("{"+add+"}"), &kv); err != nil {
				t.Fatalf("%q is not a JSON member: %v", add, err)
			}
			obj := doc
			for _, k := range d.Path[:len(d.Path)-1] {
				obj = obj[k.(string)].(map[string]any)
			}
			for k, v := range kv {
				obj[k] = v
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Load(%s) (-want +got):\n%s", tt.src, diff)
		}
		fixed, _ := json.Marshal(doc)
		if _, diags := (Options{OS: OSPosix}).Load("s.json", fixed); diags != nil {
			t.Errorf("%s, fixed as the messages say: %s\n%v", tt.src, fixed, diags)
		}
	}
}

func TestTooLarge(t *testing.T) {
	data := make([]byte, 100<<20)
	for i := range data {
		data[i] = ' '
	}
	_, diags := Load("big.json", data)
	want := "big.json: the file is 100.0 MiB; a settings file may be at most 4.0 MiB"
	if len(diags) != 1 || diags[0].String() != want {
		t.Errorf("Load(100 MiB) = %v, want %q", diags, want)
	}
}

func TestTypedSettings(t *testing.T) {
	src := patched(t, `{
		"network": {"allowedDomains": ["example.com:443"], "httpProxyPort": 8080.0, "tlsTerminate": {}},
		"filesystem": {"denyRead": ["~/.ssh", {"path": "/x[1]", "literal": true}]},
		"credentials": {"envVars": [{"name": "T", "mode": "mask", "injectHosts": ["example.com"]}]},
		"mandatoryDenySearchDepth": 1e1,
		"windows": {"proxyPortRange": [60080, 60089]}
	}`)
	s, diags := Load("s.json", src)
	if diags != nil {
		t.Fatal(diags)
	}
	if *s.Network.HTTPProxyPort != 8080 || *s.MandatoryDenySearchDepth != 10 {
		t.Errorf("integers: httpProxyPort %d, depth %d; want 8080, 10", *s.Network.HTTPProxyPort, *s.MandatoryDenySearchDepth)
	}
	wantRead := []PathEntry{{Path: "~/.ssh"}, {Path: "/x[1]", Literal: true}}
	if diff := cmp.Diff(wantRead, s.Filesystem.DenyRead); diff != "" {
		t.Errorf("denyRead (-want +got):\n%s", diff)
	}
	if got, want := s.Pos(Path{"filesystem", "denyRead", 1}).String(), fmt.Sprintf("s.json:1:%d", strings.Index(string(src), `{"literal":true`)+1); got != want {
		t.Errorf("Pos(filesystem.denyRead[1]) = %s, want %s", got, want)
	}
	if s.Network.TLSTerminate == nil || s.Credentials.EnvVars[0].Mode != "mask" || *s.Windows.ProxyPortRange != [2]int{60080, 60089} {
		t.Errorf("decoded settings lost values: %+v", s)
	}
	// Round trip: what the Go types write, the grammar accepts unchanged.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, diags := Load("roundtrip.json", b)
	if diags != nil {
		t.Fatalf("re-loading %s: %v", b, diags)
	}
	if diff := cmp.Diff(s, s2, cmpopts.IgnoreUnexported(Settings{})); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	s := Defaults()
	if len(s.Network.AllowedDomains) != 0 || len(s.Filesystem.AllowWrite) != 0 || s.Network.AllowedDomains == nil {
		t.Errorf("defaults allow something: %+v", s)
	}
	for _, os := range []OS{OSPosix, OSWindows} {
		if _, diags := (Options{OS: os}).Load("d", []byte(DefaultSettingsJSON)); diags != nil {
			t.Errorf("defaults invalid for %s: %v", os, diags)
		}
	}
}

func TestPathString(t *testing.T) {
	tests := []struct {
		p    Path
		want string
	}{
		{Path{}, "(root)"},
		{Path{"network", "allowedDomains", 2}, "network.allowedDomains[2]"},
		{Path{"ignoreViolations", "git push", 0}, `ignoreViolations["git push"][0]`},
		{Path{"a-b"}, `["a-b"]`},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("Path%v.String() = %q, want %q", []any(tt.p), got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"allowedDomains", "deniedDomains", "filesystem", "network", "allowWrite"}
	tests := map[string]string{
		"filesytem":      "filesystem",
		"Network":        "network",
		"allowedDomain":  "allowedDomains",
		"alowWrite":      "allowWrite",
		"allowAll":       "",
		"somethingElse":  "",
		"deniedDomians":  "deniedDomains",
		"allowAllDomain": "allowedDomains",
	}
	for key, want := range tests {
		if got := suggest(key, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", key, got, want)
		}
	}
}
