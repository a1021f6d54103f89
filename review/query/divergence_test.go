package query

import (
	"strings"
	"testing"
)

// TestMacOSReferenceDecisions: the macOS answers for five shapes where the
// profile once allowed what the reference's profile denies, written by
// hand from the spec (docs/reference.md#macos, #fs-precedence)
// before either reading was run. HOME=/home/me, CWD=/home/me/proj.
func TestMacOSReferenceDecisions(t *testing.T) {
	type ask struct {
		op, path string
		t        Target
		allow    bool
		rule     string
	}
	tests := []struct {
		name     string
		settings string
		asks     []ask
	}{
		{"an allow glob ending in a separator matches nothing on macOS",
			`"denyRead": ["/data/in"], "allowRead": ["/data/in/*/"], "allowWrite": ["/data/in/*/", "/data/out/*/"], "denyWrite": []`,
			[]ask{
				{"read", "/data/in/f", MacOS, false, "filesystem.denyRead[0]"},
				{"read", "/data/in/d", MacOS, false, "filesystem.denyRead[0]"},
				{"read", "/data/in/d/x", MacOS, false, "filesystem.denyRead[0]"},
				{"write", "/data/in/f", MacOS, false, "default"},
				{"write", "/data/in/d/x", MacOS, false, "default"},
				{"write", "/data/out/f", MacOS, false, "default"},
				{"write", "/data/out/d/x", MacOS, false, "default"},
				// Linux drops the separator: each match, with its contents.
				{"read", "/data/in/d/x", Linux, true, "filesystem.allowRead[0]"},
			}},
		{"an allow glob has no literal reading",
			`"denyRead": ["/data/keep[1]"], "allowRead": [], "allowWrite": ["/data/runs/[0-9]*"], "denyWrite": []`,
			[]ask{
				{"write", "/data/runs/[0-9]*", MacOS, false, "default"},
				{"write", "/data/runs/[0-9]*/x", MacOS, false, "default"},
				{"write", "/data/runs/7x", MacOS, true, "filesystem.allowWrite[0]"},
				{"write", "/data/runs/7x/y", MacOS, false, "default"},
				// A deny keeps it: a deny may only grow.
				{"read", "/data/keep[1]", MacOS, false, "filesystem.denyRead[0]"},
				{"read", "/data/keep1/x", MacOS, false, "filesystem.denyRead[0]"},
			}},
		{"an allow written from ~ carves an absolute deny over the home directory",
			`"denyRead": ["/home/me/**/*", "/home/me/Library/**"], "allowRead": ["~/work", "~/Library/Caches"], "allowWrite": ["~/work/out"], "denyWrite": []`,
			[]ask{
				{"read", "~/work/a", MacOS, true, "filesystem.allowRead[0]"},
				{"read", "~/Library/Caches/x", MacOS, true, "filesystem.allowRead[1]"},
				{"read", "~/Library/Prefs", MacOS, false, "filesystem.denyRead[1]"},
				{"read", "~/other", MacOS, false, "filesystem.denyRead[0]"},
				{"write", "~/work/out/f", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "~/work/out/f", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"a relative entry has .. folded",
			`"denyRead": ["./app/../conf/secret"], "allowRead": [], "allowWrite": ["."], "denyWrite": []`,
			[]ask{
				{"read", "./conf/secret", MacOS, false, "filesystem.denyRead[0]"},
				{"read", "./conf/secret", Linux, false, "filesystem.denyRead[0]"},
				{"read", "./conf/secret", Windows, false, "filesystem.denyRead[0]"},
				{"read", "./app/x", MacOS, true, "default"},
				{"remove", "./app", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "./app/x", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "./conf", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "./conf/secret", MacOS, false, "filesystem.denyRead[0]"},
			}},
		{"a deny glob whose base is a write root",
			`"denyRead": ["/srv/cache/**/*.pem"], "allowRead": [], "allowWrite": ["/srv/cache"], "denyWrite": []`,
			[]ask{
				{"read", "/srv/cache/a.pem", MacOS, false, "filesystem.denyRead[0]"},
				{"write", "/srv/cache/x.txt", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "/srv/cache/x.txt", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "/srv/cache/sub", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "/srv/cache/a.pem", MacOS, false, "filesystem.denyRead[0]"},
				// Stricter than the reference, deliberately: renaming the
				// root would carry the .pem files out of the deny's reach.
				{"remove", "/srv/cache", MacOS, false, "filesystem.denyRead[0]"},
			}},
		{"a convenience write root hidden by a deny from another root is dropped",
			`"denyRead": ["/home/**"], "allowRead": [], "allowWrite": ["."], "denyWrite": []`,
			[]ask{
				{"write", "~/.npm/_logs/x", MacOS, false, "default"},
				{"write", "~/.claude/debug/x", MacOS, false, "default"},
				{"write", "./x", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"a convenience write root reopened inside the deny is kept",
			`"denyRead": ["/home/**"], "allowRead": ["~/.npm"], "allowWrite": [], "denyWrite": []`,
			[]ask{
				{"write", "~/.npm/_logs/x", MacOS, true, "default"},
				{"write", "~/.claude/debug/x", MacOS, false, "default"},
			}},
		{"only a literal allow reopens a convenience write root",
			`"denyRead": ["/home/me/**/*", "~/.claude"], "allowRead": ["/home/me/*/", "~/.claude/*"], "allowWrite": [], "denyWrite": []`,
			[]ask{
				{"write", "~/.npm/_logs/x", MacOS, false, "default"},
				{"remove", "~/.npm/_logs/x", MacOS, false, "default"},
				{"write", "~/.claude/debug/x", MacOS, false, "default"},
			}},
		{"a literal deny over the home directory drops the convenience write roots",
			`"denyRead": ["/home"], "allowRead": [], "allowWrite": ["."], "denyWrite": []`,
			[]ask{
				{"write", "~/.npm/_logs/x", MacOS, false, "default"},
				{"remove", "~/.npm/_logs/x", MacOS, false, "default"},
				{"remove", "~/.claude/debug", MacOS, false, "default"},
				{"remove", "./x", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"a literal deny under ~ named by an absolute glob write root",
			`"denyRead": ["~/.aws"], "allowRead": [], "allowWrite": ["/home/me/**/*"], "denyWrite": []`,
			[]ask{
				{"write", "~/.aws/f", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "~/.aws/f", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "~/.aws", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "~/other", MacOS, true, "filesystem.allowWrite[0]"},
				// srt's own: git's configuration outside the repository.
				{"write", "~/.config/git/config", MacOS, false, "mandatory"},
				{"remove", "~/.config", MacOS, false, "mandatory"},
			}},
		{"a read deny equal to a write root, with a write root from another root",
			`"denyRead": ["/data/runs"], "allowRead": [], "allowWrite": ["/data/runs", "./out"], "denyWrite": []`,
			[]ask{
				{"write", "/data/runs/f", MacOS, true, "filesystem.allowWrite[0]"},
				// Stricter than the reference, deliberately: the profile
				// cannot tell whether ./out holds /data/runs, and assumes
				// it does.
				{"remove", "/data/runs/f", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "./out/f", MacOS, true, "filesystem.allowWrite[1]"},
			}},
		{"a read deny of / lies inside no write root",
			`"denyRead": [{"path": "/", "literal": true}], "allowRead": ["/"], "allowWrite": ["~/proj/secret"], "denyWrite": []`,
			[]ask{
				// The allow of / reopens the convenience roots.
				{"write", "~/.claude/debug/f", MacOS, true, "default"},
				{"remove", "~/.claude/debug/f", MacOS, true, "default"},
				{"remove", "~/proj/secret/f", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"a read deny of / is named by no pattern write root from another root",
			`"denyRead": ["/"], "allowRead": [], "allowWrite": ["/", "./out/*.log"], "denyWrite": []`,
			[]ask{
				{"remove", "/srv/x", MacOS, true, "filesystem.allowWrite[0]"},
				{"remove", "./out/a.log", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"an absolute write deny with .. pins the directories of both spellings",
			`"denyRead": [], "allowRead": [], "allowWrite": ["/"], "denyWrite": ["/tmp/x/../y"]`,
			[]ask{
				{"write", "/tmp/y", MacOS, false, "filesystem.denyWrite[0]"},
				{"remove", "/tmp/y", MacOS, false, "filesystem.denyWrite[0]"},
				// Stricter than the reference where /tmp/x exists: it
				// pins the unfolded spelling's directories only where it
				// does not, and then as /tmp/x, which Seatbelt never sees.
				{"remove", "/tmp/x", MacOS, false, "filesystem.denyWrite[0]"},
				{"remove", "/tmp/z", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"a deny pattern with .. pins the directories of its spelling",
			`"denyRead": ["/opt/a/../*.key"], "allowRead": [], "allowWrite": ["/"], "denyWrite": ["/opt/c/../*.pem"]`,
			[]ask{
				// The reference keeps the spelling (resolving /opt/a/..
				// climbs to an ancestor) and pins /opt/a/.. and above.
				{"remove", "/opt/a", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "/opt/k.key", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "/opt/c", MacOS, false, "filesystem.denyWrite[0]"},
				{"remove", "/opt/b", MacOS, true, "filesystem.allowWrite[0]"},
			}},
		{"the text reading of a deny glob inside a pattern allow is not repeated",
			`"denyRead": ["./build[1]"], "allowRead": ["/home/me/**/*"], "allowWrite": [], "denyWrite": []`,
			[]ask{
				// A literal deny is repeated only inside a literal allow.
				{"read", "./build[1]/a", MacOS, true, "filesystem.allowRead[0]"},
				{"read", "./build1/a", MacOS, false, "filesystem.denyRead[0]"},
			}},
		{"the text reading of a deny glob inside an allow from another root",
			`"denyRead": ["./src/[ab]*.go"], "allowRead": ["~/proj"], "allowWrite": [], "denyWrite": []`,
			[]ask{
				{"read", "./src/[ab]*.go/f", MacOS, false, "filesystem.denyRead[0]"},
				{"read", "./src/a1.go", MacOS, false, "filesystem.denyRead[0]"},
			}},
		{"a directory holding a read deny, matched by a glob write root",
			`"denyRead": ["./[WIP] x/*.log"], "allowRead": [], "allowWrite": ["/home/me/**/*"], "denyWrite": []`,
			[]ask{
				{"remove", "./[WIP] x/a.log", MacOS, false, "filesystem.denyRead[0]"},
				// Stricter than the reference, deliberately: renaming the
				// directory would carry the .log files out of the deny.
				{"remove", "./[WIP] x", MacOS, false, "filesystem.denyRead[0]"},
				{"remove", "./[WIP] x/b.txt", MacOS, true, "filesystem.allowWrite[0]"},
			}},
	}
	for _, tc := range tests {
		src := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {`+tc.settings+`}}`)
		e := src.Evaluator("/home/me", "/home/me/proj")
		for _, a := range tc.asks {
			p := e.Path(a.path)
			var d Decision
			switch a.op {
			case "read":
				d = e.Read(p, a.t)
			case "write":
				d = e.Write(p, a.t)
			case "remove":
				d = e.Remove(p, a.t)
			}
			if d.Allow != a.allow || d.Rule.Key != a.rule {
				t.Errorf("%s: %s %s on %s = %v by %s (%s), want %v by %s", tc.name, a.op, a.path, a.t, d.Allow, d.Rule.Key, d.Why, a.allow, a.rule)
			}
		}
	}
}

// TestSummaryNotes: explain names a folded entry with its spelling, and
// says what a trailing separator means on each target.
func TestSummaryNotes(t *testing.T) {
	src := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {
		"denyRead": ["./app/../conf/secret", "/data/in"], "allowRead": ["/data/in/*/"], "allowWrite": ["./out/*/"], "denyWrite": []}}`)
	e := src.Evaluator("", "")
	want := map[string]bool{}
	for _, l := range e.Summary(Targets) {
		switch {
		case l.Subject == "${CWD}/conf/secret (written ./app/../conf/secret)":
			want["folded "+string(l.Target)] = true
		case l.Subject == "/data/in/*" || l.Subject == "${CWD}/out/*":
			if strings.Contains(l.Why, TrailingSeparator(l.Target)) {
				want[l.Kind+" "+string(l.Target)] = true
			}
		}
	}
	for _, k := range []string{"folded linux", "folded macos", "folded windows", "read macos", "read linux", "write macos", "write linux"} {
		if !want[k] {
			t.Errorf("summary: no %s line (got %v)", k, want)
		}
	}
	if !strings.Contains(TrailingSeparator(MacOS), "matches nothing") || !strings.Contains(TrailingSeparator(Linux), "drops it") {
		t.Errorf("TrailingSeparator: %q / %q", TrailingSeparator(MacOS), TrailingSeparator(Linux))
	}
}
