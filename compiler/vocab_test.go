package compiler

import (
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
