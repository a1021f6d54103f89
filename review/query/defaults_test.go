package query

import (
	"strings"
	"testing"
)

// TestLinuxDefaultWrites: the overview lists the default write paths that
// linux/bwrap.args binds, and a point question says when they hold.
func TestLinuxDefaultWrites(t *testing.T) {
	e := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["./build"], "denyWrite": []}}`).Evaluator("", "")
	listed := map[string]Line{}
	for _, l := range e.Summary([]Target{Linux}) {
		if l.Kind == "write" {
			listed[l.Subject] = l
		}
	}
	for _, p := range []string{"/tmp/claude (TMPDIR)", "/dev/null", "/dev/stdout"} {
		if l, ok := listed[p]; !ok || !l.Allow {
			t.Errorf("overview: %s missing or denied: %+v", p, l)
		}
	}
	if _, ok := listed["/private/tmp/claude"]; ok {
		t.Errorf("overview lists /private/tmp/claude, which the Linux plan does not bind")
	}
	for _, tt := range []struct {
		path  string
		allow bool
		why   string
	}{
		{"/tmp/claude/x", true, "a new, empty directory of each run"},
		{"${CWD}/build/x", true, "only if ${CWD}/build exists when srt starts"},
		{"${CWD}/x", false, "nothing is writable"},
		{"/dev/null", true, "bubblewrap's --dev"},
		{"/dev/dtracehelper", false, "stays in the sandbox"},
	} {
		d := e.Write(tt.path, Linux)
		if d.Allow != tt.allow || !strings.Contains(d.Why, tt.why) {
			t.Errorf("Write(%s) = %s (%s), want %v and %q", tt.path, d.Verdict(), d.Why, tt.allow, tt.why)
		}
	}
}
