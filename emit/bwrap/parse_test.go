package bwrap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	in := `# header
--new-session
--setenv "A B" ""                               # a comment
@deny-read ${HOME}/.ssh                         # filesystem.denyRead[0] s.json:1:2
@deny-read:pattern "${CWD}/a b/#x"
@proxy-env

@mandatory-scan depth=3 git=protect-config      # mandatory
@kernel-mask /proc/kcore
--ro-bind-try /proc/sys /proc/sys
`
	pl, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Args: []string{"--new-session"}, Line: 2},
		{Args: []string{"--setenv", "A B", ""}, Line: 3, Comment: "a comment"},
		{Directive: DenyRead, Operand: "${HOME}/.ssh", Line: 4, Comment: "filesystem.denyRead[0] s.json:1:2"},
		{Directive: DenyRead, Qualifier: Pattern, Operand: "${CWD}/a b/#x", Line: 5},
		{Directive: ProxyEnv, Line: 6},
		{Directive: MandatoryScan, Operand: "depth=3 git=protect-config", Params: true, Line: 8, Comment: "mandatory"},
		{Directive: "kernel-mask", Operand: "/proc/kcore", Line: 9},
		{Args: []string{"--ro-bind-try", "/proc/sys", "/proc/sys"}, Line: 10},
	}
	if diff := cmp.Diff(want, pl.Steps); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	// Render writes what Parse reads back.
	again, err := Parse(pl.Render())
	if err != nil {
		t.Fatal(err)
	}
	// (Comments are not written: Render writes each step's origin.)
	if diff := cmp.Diff(pl.Steps, again.Steps, cmpopts.IgnoreFields(Step{}, "Line", "Comment")); diff != "" {
		t.Errorf("Parse(Render) (-first +second):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"--a\nbind / /\n", `line 2: "bind" is neither a bubblewrap option`},
		{"@\n", "line 1: a directive needs a name"},
		{`@deny-read "unterminated`, "line 1: unterminated"},
		{`@deny-read "a"b`, "line 1: a quoted word"},
		{`"--bind" / /`, "line 1: \"--bind\" is neither"},
		{"@mandatory-scan depth=3 \"x y\"", "a quoted word among parameters"},
	} {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestConcrete(t *testing.T) {
	pl := Plan{Source: "s.json", Steps: []Step{
		{Args: []string{"--bind", "${CWD}", "${CWD}"}},
		{Directive: DenyRead, Operand: "${HOME}/.ssh"},
		{Directive: AllowWrite, Operand: "${HOME}"},
		{Directive: DenyWrite, Operand: "${HOMEX}/a"},
		{Directive: MandatoryScan, Operand: "depth=3 git=protect-config", Params: true},
	}}
	got := pl.Concrete("/home/u v", "/")
	want := []Step{
		{Args: []string{"--bind", "/", "/"}},
		{Directive: DenyRead, Operand: "/home/u v/.ssh"},
		{Directive: AllowWrite, Operand: "/home/u v"},
		{Directive: DenyWrite, Operand: "${HOMEX}/a"},
		{Directive: MandatoryScan, Operand: "depth=3 git=protect-config", Params: true},
	}
	if diff := cmp.Diff(want, got.Steps); diff != "" {
		t.Errorf("Concrete (-want +got):\n%s", diff)
	}
	if pl.Steps[0].Args[1] != "${CWD}" {
		t.Error("Concrete changed the plan it was called on")
	}
	back, err := Parse(got.Render())
	if err != nil {
		t.Fatal(err)
	}
	if back.Steps[1].Operand != "/home/u v/.ssh" {
		t.Errorf("a concrete path with a blank reads back as %q", back.Steps[1].Operand)
	}
	if r := string(got.Render()); strings.Contains(r, "${HOME}") || strings.Contains(r, "${CWD}") {
		t.Errorf("concrete plan still names a root:\n%s", r)
	}
}

// FuzzParse: Parse never panics, and what it reads Render writes back as
// text Parse reads to the same steps (a plan is read once on the host and
// checked by its digest: a plan that reads two ways would run other
// steps than a review saw).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--new-session\n--setenv \"A B\" \"\"  # c\n",
		"@deny-read ${HOME}/.ssh # filesystem.denyRead[0] s.json:1:2\n@deny-read:pattern \"${CWD}/a b/#x\"\n",
		"@mandatory-scan depth=3 git=protect-config\n@landlock-write ${CWD}\n",
		"--bind \"\\x00\" \"a\\nb\"\n@ x\n@\n\"--quoted\"\n",
		// Read two ways once: a plain word Render would quote, and a
		// directive without a name.
		"--\"", "@:", "@x:",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pl, err := Parse(b)
		if err != nil {
			return
		}
		again, err := Parse(pl.Render())
		if err != nil {
			t.Fatalf("Parse(%q) read %d steps, whose Render does not parse: %v\n%s", b, len(pl.Steps), err, pl.Render())
		}
		if diff := cmp.Diff(pl.Steps, again.Steps, cmpopts.IgnoreFields(Step{}, "Line", "Comment"), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Parse(%q), rendered and read again (-first +second):\n%s", b, diff)
		}
	})
}
