package wfp_test

import (
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/emit/wfp"
)

// TestAccess: the access-control program of a plan, evaluated the way
// Windows does (docs/reference.md#windows-aces, #windows-token,
// #windows-cases). The expected answers are written from the spec, not
// from the evaluator.
func TestAccess(t *testing.T) {
	const settings = `{
 "network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {
  "denyRead": ["C:\\d", "C:\\p\\**\\*.pem", "C:\\app\\[prod].env"],
  "allowRead": ["C:\\d\\pub", "C:\\u\\.aws\\cfg"],
  "allowWrite": ["C:\\p", "C:\\p\\vendor\\x", "C:\\d\\pub\\w", "C:\\u\\.aws"],
  "denyWrite": ["C:\\p\\vendor"]},
 "credentials": {"files": [{"path": "C:\\u\\.aws", "mode": "deny"}]}
}`
	b := wfp.NewACL(compile(t, settings)).Bind(policy.Path.String)
	for _, c := range []struct {
		op, path string
		allow    bool
		by       string // the settings entry of the deciding entry; "" for the host's own ACLs
	}{
		// Reads: no entry applies; the host's ACLs decide.
		{"read", "C:/elsewhere/x", true, ""},
		// W6: a deny ACE of full access on the target and below.
		{"read", "C:/d/x", false, "filesystem.denyRead[0]"},
		// Names compare ignoring case.
		{"read", "C:/D/X", false, "filesystem.denyRead[0]"},
		// A grant below the deny is nearer: it reopens.
		{"read", "C:/d/pub/f", true, "filesystem.allowRead[0]"},
		// Each match of a pattern carries its own deny, nearer than the
		// write root's grant.
		{"read", "C:/p/a/key.pem", false, "filesystem.denyRead[1]"},
		{"read", "C:/p/a/key.txt", true, "filesystem.allowWrite[0]"},
		// W13: [ ] without * or ? is a name.
		{"read", "C:/app/[prod].env", false, "filesystem.denyRead[2]"},
		{"read", "C:/app/p.env", true, ""},
		// W10: the grants at or under a credential file are dropped.
		{"read", "C:/u/.aws/cfg", false, "credentials.files[0].path"},
		{"write", "C:/u/.aws/x", false, "credentials.files[0].path"},
		// W4: a write root.
		{"write", "C:/p/src/a.go", true, "filesystem.allowWrite[0]"},
		{"write", "C:/P/SRC/A.GO", true, "filesystem.allowWrite[0]"},
		// Nothing else is writable.
		{"write", "C:/elsewhere/x", false, ""},
		// A read deny also denies writes.
		{"write", "C:/p/a/key.pem", false, "filesystem.denyRead[1]"},
		// W7, W8: a write deny below a root; a root under it is a read
		// grant only.
		{"write", "C:/p/vendor/y", false, "filesystem.denyWrite[0]"},
		{"write", "C:/p/vendor/x/y", false, "filesystem.denyWrite[0]"},
		{"read", "C:/p/vendor/x/y", true, "filesystem.allowWrite[1]"},
		// A write root inside a read deny restores it.
		{"write", "C:/d/pub/w/f", true, "filesystem.allowWrite[2]"},
		{"write", "C:/d/pub/f", false, "filesystem.denyRead[0]"},
	} {
		d := b.Read(c.path)
		if c.op == "write" {
			d = b.Write(c.path)
		}
		by := ""
		if d.By != nil {
			by = d.By.Entry.Rule.Origin.Key
		}
		if d.Allow != c.allow || by != c.by {
			t.Errorf("%s %s = %v by %q, want %v by %q", c.op, c.path, d.Allow, by, c.allow, c.by)
		}
	}
}

// TestAccessHost: questions about a host's paths meet the plan's symbolic
// roots once they are expanded there, and the helper ranks the grants
// again on those paths.
func TestAccessHost(t *testing.T) {
	const settings = `{
 "network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": [], "allowRead": [], "allowWrite": ["C:\\Users\\me\\proj"], "denyWrite": ["%USERPROFILE%"]}
}`
	expand := func(p policy.Path) string {
		s, _ := p.Expand("C:/Users/me", "C:/Users/me/proj")
		return s
	}
	b := wfp.NewACL(compile(t, settings)).Bind(expand)
	if d := b.Write("C:/Users/me/proj/x"); d.Allow {
		t.Errorf("write under a root below %%USERPROFILE%%, denied for writing = allow, want deny (the root is ranked a read grant)")
	}
	if d := b.Read("C:/Users/me/proj/x"); !d.Allow {
		t.Errorf("read under a demoted write root = deny, want allow")
	}
}
