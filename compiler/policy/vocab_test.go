package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestVocabularyJSON: every word of the vocabulary reads back as itself
// and is written as the same JSON string an untyped string was, and a
// plan with a word this srt does not know is refused when it is read.
func TestVocabularyJSON(t *testing.T) {
	var p Policy
	plan := `{"process":{"seccomp":["keyring","unix","namespaces"]},
		"env":{"mask":[{"name":"A","decode":"jwt","onExtractNoMatch":"deny","origin":{"key":"k"}},{"name":"B","origin":{"key":"k"}}],
		"sigv4":{"streaming":"passthrough","presigned":"deny"}}}`
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Process.Seccomp, SeccompRules(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("seccomp = %q, want %q", got, want)
	}
	if a := p.Env.Mask[0]; a.Decode != DecodeJWT || a.OnExtractNoMatch != NoMatchDeny {
		t.Errorf("mask[0] = %+v", a.Masking)
	}
	if b := p.Env.Mask[1]; b.Decode != DecodeNone || b.OnExtractNoMatch != "" || b.OnExtractNoMatch.Resolved() != NoMatchWarn {
		t.Errorf("mask[1] = %+v", b.Masking)
	}
	s := p.Env.SigV4
	if !s.Streaming.Passthrough() || s.Presigned.Passthrough() || s.SigV4A.Passthrough() || s.SigV4A.Resolved() != SigV4Deny {
		t.Errorf("sigv4 = %+v", *s)
	}
	out, err := json.Marshal(p.Env.SigV4)
	if err != nil || string(out) != `{"streaming":"passthrough","presigned":"deny"}` {
		t.Errorf("json.Marshal(sigv4) = %s, %v", out, err)
	}
	out, err = json.Marshal(p.Process.Seccomp)
	if err != nil || string(out) != `["keyring","unix","namespaces"]` {
		t.Errorf("json.Marshal(seccomp) = %s, %v", out, err)
	}

	for _, tc := range []struct{ plan, want string }{
		{`{"process":{"seccomp":["keyring","keyrings"]}}`, `unknown seccomp rule set "keyrings" (this srt knows keyring, unix, namespaces)`},
		{`{"process":{"seccomp":[""]}}`, `unknown seccomp rule set ""`},
		{`{"env":{"mask":[{"name":"A","decode":"JWT"}]}}`, `unknown decoder "JWT" (this srt knows jwt)`},
		{`{"env":{"mask":[{"name":"A","onExtractNoMatch":"ignore"}]}}`, `unknown onExtractNoMatch value "ignore" (this srt knows warn, deny, error)`},
		{`{"env":{"sigv4":{"sigv4a":"allow"}}}`, `unknown sigv4 mode "allow" (this srt knows deny, passthrough)`},
		{`{"filesystem":{"credentialMasks":[{"path":"/x","mask":{"decode":"base64"}}]}}`, `unknown decoder "base64"`},
	} {
		var p Policy
		err := json.Unmarshal([]byte(tc.plan), &p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("json.Unmarshal(%s) = %v, want an error containing %q", tc.plan, err, tc.want)
		}
	}
}
