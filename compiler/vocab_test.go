package compiler

import (
	"reflect"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// TestCompileVocabulary: the words of credentials reach the policy as the
// policy's constants, and a value the grammar should have refused (here
// put into loaded settings by hand, as a library caller could) stops the
// compilation with its JSON path instead of reaching a plan.
func TestCompileVocabulary(t *testing.T) {
	const src = `{
  "network": {"allowedDomains": ["example.com"], "deniedDomains": [], "tlsTerminate": {}},
  "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
  "credentials": {
    "envVars": [{"name": "TOKEN", "mode": "mask", "extract": "t=(\\w+)", "onExtractNoMatch": "error", "decode": "jwt"}],
    "files": [{"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+)", "onExtractNoMatch": "deny"}],
    "sigv4": {"streaming": "passthrough", "sigv4a": "deny"}
  }
}`
	p, _, err := Compile(load(t, src), schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Env.Mask[0].Masking; m.OnExtractNoMatch != policy.NoMatchError || m.Decode != policy.DecodeJWT {
		t.Errorf("envVars[0] = %+v", m)
	}
	if m := p.Filesystem.CredentialMasks[0].Mask; m.OnExtractNoMatch != policy.NoMatchDeny || m.Decode != policy.DecodeNone {
		t.Errorf("files[0] = %+v", m)
	}
	if s := *p.Env.SigV4; s != (policy.SigV4{Streaming: policy.SigV4Passthrough, SigV4A: policy.SigV4Deny}) {
		t.Errorf("sigv4 = %+v", s)
	}

	bad := func(v string) *string { return &v }
	for _, tc := range []struct {
		name   string
		change func(s *schema.Settings)
		want   string
	}{
		{"sigv4", func(s *schema.Settings) { s.Credentials.SigV4.Presigned = bad("allow") },
			`compiler: credentials.sigv4.presigned: policy: unknown sigv4 mode "allow" (this srt knows deny, passthrough) (the grammar should have refused it)`},
		{"onExtractNoMatch", func(s *schema.Settings) { s.Credentials.Files[0].OnExtractNoMatch = bad("skip") },
			`compiler: credentials.files[0].onExtractNoMatch: policy: unknown onExtractNoMatch value "skip" (this srt knows warn, deny, error) (the grammar should have refused it)`},
		{"decode", func(s *schema.Settings) { s.Credentials.EnvVars[0].Decode = bad("base64") },
			`compiler: credentials.envVars[0].decode: policy: unknown decoder "base64" (this srt knows jwt) (the grammar should have refused it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t, src)
			tc.change(s)
			p, _, err := Compile(s, schema.Options{OS: schema.OSPosix})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Compile = %v, %v; want the error %q", p != nil, err, tc.want)
			}
		})
	}
}

// TestCompileHostPatterns: excludeDomains, mitmProxy.domains and
// injectHosts reach the policy parsed, each entry with its origin; an
// entry the grammar should have refused (put into loaded settings by hand)
// stops the compilation with its JSON path, and so does an empty
// injectHosts, which a plan could not tell from an absent one.
func TestCompileHostPatterns(t *testing.T) {
	const src = `{
  "network": {"allowedDomains": ["api.example.com", "[2001:db8::1]"], "deniedDomains": [],
    "tlsTerminate": {"excludeDomains": ["pinned.example.com", "fe80::1%eth0"]},
    "mitmProxy": {"socketPath": "/tmp/m.sock", "domains": ["*.Inspect.example.com", "0:0::1"]}},
  "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
  "credentials": {
    "envVars": [{"name": "A", "mode": "mask", "injectHosts": ["2001:DB8::1"]}, {"name": "B", "mode": "mask"}],
    "files": [{"path": "~/.netrc", "mode": "mask", "injectHosts": ["api.example.com"]}]
  }
}`
	p, _, err := Compile(load(t, src), schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	rule := func(entry, host, key, pos string) policy.HostRule {
		return policy.HostRule{Entry: entry, Host: host, Origin: policy.Origin{Key: key, Pos: pos}}
	}
	for _, c := range []struct {
		name      string
		got, want policy.HostList
	}{
		{"excludeDomains", p.Network.TLS.ExcludeDomains, policy.HostList{
			rule("pinned.example.com", "pinned.example.com", "network.tlsTerminate.excludeDomains[0]", "s.json:3:41"),
			rule("fe80::1%eth0", "fe80::1", "network.tlsTerminate.excludeDomains[1]", "s.json:3:63")}},
		{"mitmProxy.domains", p.Network.MitmProxy.Domains, policy.HostList{
			rule("*.Inspect.example.com", "*.inspect.example.com", "network.mitmProxy.domains[0]", "s.json:4:60"),
			rule("0:0::1", "::1", "network.mitmProxy.domains[1]", "s.json:4:85")}},
		{"envVars[0].injectHosts", p.Env.Mask[0].InjectHosts, policy.HostList{
			rule("2001:DB8::1", "2001:db8::1", "credentials.envVars[0].injectHosts[0]", "s.json:7:63")}},
		{"envVars[1].injectHosts", p.Env.Mask[1].InjectHosts, nil},
		{"files[0].injectHosts", p.Filesystem.CredentialMasks[0].Mask.InjectHosts, policy.HostList{
			rule("api.example.com", "api.example.com", "credentials.files[0].injectHosts[0]", "s.json:8:68")}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %+v\nwant %+v", c.name, c.got, c.want)
		}
	}

	for _, tc := range []struct {
		name   string
		change func(s *schema.Settings)
		want   string
	}{
		{"excludeDomains", func(s *schema.Settings) { s.Network.TLSTerminate.ExcludeDomains[1] = "*" },
			`compiler: network.tlsTerminate.excludeDomains[1]: "*": not a host pattern: a host name with a dot inside (example.com), a wildcard (*.example.com), localhost or an IPv6 address (the grammar should have refused it)`},
		{"mitmProxy.domains", func(s *schema.Settings) { s.Network.MitmProxy.Domains[0] = "*.com" },
			`compiler: network.mitmProxy.domains[0]: "*.com": not a host pattern: a wildcard needs at least two labels after "*." (*.example.com) (the grammar should have refused it)`},
		{"injectHosts", func(s *schema.Settings) { s.Credentials.Files[0].InjectHosts[0] = "api.example.com:443" },
			`compiler: credentials.files[0].injectHosts[0]: "api.example.com:443": not a host pattern: a ":" is only for an IPv6 address, and a host pattern has no port (the grammar should have refused it)`},
		{"empty injectHosts", func(s *schema.Settings) { s.Credentials.EnvVars[0].InjectHosts = []string{} },
			`compiler: credentials.envVars[0].injectHosts: a masked credential's injectHosts may not be empty (the value would go nowhere) (the grammar should have refused it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t, src)
			tc.change(s)
			p, _, err := Compile(s, schema.Options{OS: schema.OSPosix})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Compile = %v, %v; want the error %q", p != nil, err, tc.want)
			}
		})
	}
}
