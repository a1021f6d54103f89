//go:build linux

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"srt.dev/emit/artifact"
	"srt.dev/internal/testenv"
)

// A planEdit weakens the mounts of the plan of writeProject on the host
// (its checksum updated): it returns the edited linux/bwrap.args, the
// line it made writable beyond the project, a file it lets the command
// write outside every write root, and what the refusal says after "the
// two layers disagree: ", in this order.
type planEdit struct {
	name string
	edit func(w *world, lines []string) (edited []string, line int, outside string, says []string)
}

// replaceLine replaces the line that starts with prefix, and returns its
// number; the test fails when there is none.
func replaceLine(w *world, lines []string, prefix, with string) ([]string, int) {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out := append([]string(nil), lines...)
			out[i] = with
			return out, i + 1
		}
	}
	w.t.Fatalf("no line %q in\n%s", prefix, strings.Join(lines, "\n"))
	return nil, 0
}

var planEdits = []planEdit{
	{"root bound writable", func(w *world, lines []string) ([]string, int, string, []string) {
		out, n := replaceLine(w, lines, "--ro-bind / /", "--bind / /")
		return out, n, w.escaped, []string{`"--bind / /" binds / writable, and / is outside the second layer's (Landlock's) write roots: `}
	}},
	{"write root one level up", func(w *world, lines []string) ([]string, int, string, []string) {
		parent := filepath.Dir(w.proj)
		out, n := replaceLine(w, lines, "@allow-write ${CWD} ", "@allow-write "+parent+"  # the review moved it up")
		// srt binds a write root from the descriptor it opened it with.
		return out, n, filepath.Join(parent, "outside.txt"), []string{"@allow-write " + parent + `: "--bind /proc/self/fd/`, " " + parent + `" binds ` + parent + " writable, and " + parent + " is outside the second layer's (Landlock's) write roots: "}
	}},
	{"a bind added", func(w *world, lines []string) ([]string, int, string, []string) {
		dir := filepath.Join(w.base, "other")
		testenv.MkdirAll(w.t, dir, 0o755)
		out, n := replaceLine(w, lines, "--ro-bind / /", "--ro-bind / /\n--bind "+dir+" "+dir)
		return out, n + 1, filepath.Join(dir, "x"), []string{`"--bind ` + dir + " " + dir + `" binds ` + dir + " writable, and " + dir + " is outside the second layer's (Landlock's) write roots: "}
	}},
}

// inOrder reports whether s holds each of parts, one after the other.
func inOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// secondLayerOff is the plan with its second layer turned off as a plan
// says it (@landlock off): what srt runs without the comparison.
func secondLayerOff(lines []string) []string {
	var out []string
	for _, l := range strings.Split(strings.Join(lines, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "@landlock-write"):
		case strings.HasPrefix(l, "@landlock "):
			out = append(out, "@landlock off")
		default:
			out = append(out, l)
		}
	}
	return out
}

// TestLayersDisagree: a plan edited on the host so that its mounts let
// the command write beyond its second layer's write roots (the root bound
// writable, a write root moved one level up, a bind added), its checksum
// recomputed, is refused before anything runs, with the line, what it
// binds and that the two layers disagree, and the file outside is not
// written; on any kernel, Landlock or not. The control: the same edit
// with the second layer off (@landlock off), which srt runs on the mounts
// alone, writes it. As the caller, and as nobody when the tests run as
// root.
func TestLayersDisagree(t *testing.T) {
	requireSandbox(t)
	bin := srtBin
	users := testUsers()
	for _, uid := range users {
		for _, pe := range planEdits {
			t.Run(pe.name+"/uid="+strconv.Itoa(uid), func(t *testing.T) {
				w := newWorld(t, bin, uid)
				plan := writePlan(t, w.base, writeProject, artifact.Options{})
				b, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
				if err != nil {
					t.Fatal(err)
				}
				edited, n, outside, says := pe.edit(w, strings.Split(string(b), "\n"))
				editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(edited, "\n")))
				w.chown()
				w.trust(plan)
				script := "echo started; echo x > " + outside
				code, out, errOut := w.srt("run", "--plan", plan, "--", "/bin/sh", "-c", script)
				want := append([]string{filepath.Join(plan, "linux", "bwrap.args") + ":" + strconv.Itoa(n) + ": the two layers disagree: "}, says...)
				want = append(want, "recompile the plan with srtc compile, or undo the edit")
				if code != 1 || out != "" || !inOrder(errOut, want) {
					t.Errorf("srt ran the weakened plan, or refused it otherwise: exit %d, stdout %q\nstderr: %s\nwant in it, in this order: %q", code, out, errOut, want)
				}
				if _, err := os.Stat(outside); err == nil {
					t.Fatalf("%s written", outside)
				}

				// The control: the same edit, the second layer off.
				editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(secondLayerOff(edited), "\n")))
				w.chown()
				w.trust(plan)
				code, out, errOut = w.srt("run", "--plan", plan, "--", "/bin/sh", "-c", script)
				if b, err := os.ReadFile(outside); code != 0 || out != "started\n" || err != nil || string(b) != "x\n" {
					t.Fatalf("control: the edit with @landlock off should let the write through: exit %d, stdout %q, %s: %q %v\n%s", code, out, outside, b, err, errOut)
				}
			})
		}
	}
}

// TestLayersUnsaid: a plan that does not say what its second layer is
// (its @landlock lines deleted, or compiled by an older srtc) is refused
// before anything runs; one that says it has none (@landlock off) runs.
func TestLayersUnsaid(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	plan := writePlan(t, dir, writeProject, artifact.Options{})
	b, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "@landlock") {
			deleted = append(deleted, l)
		}
	}
	editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(deleted, "\n")))
	code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran")
	want := filepath.Join(plan, "linux", "bwrap.args") + ": the plan has no @landlock line, so it does not say what its second layer (Landlock) is"
	if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "recompile it with srtc compile") {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(secondLayerOff(strings.Split(string(b), "\n")), "\n")))
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Errorf("@landlock off: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestLandlockDryRun: srt run --dry-run labels each of the init step's
// options of the second layer with the line it came from: the scopes and
// grants with @landlock, each write root with its @landlock-write line.
func TestLandlockDryRun(t *testing.T) {
	requireSandbox(t)
	landlockHost(t)
	dir := project(t)
	plan := writePlan(t, dir, writeProject, artifact.Options{})
	b, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
	if err != nil {
		t.Fatal(err)
	}
	var landlock, cwd, tmp int
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "@landlock grant="):
			landlock = i + 1
		case strings.HasPrefix(l, "@landlock-write ${CWD} "):
			cwd = i + 1
		case strings.HasPrefix(l, "@landlock-write /tmp/claude "):
			tmp = i + 1
		}
	}
	if landlock == 0 || cwd == 0 || tmp == 0 {
		t.Fatalf("no @landlock, @landlock-write ${CWD} or @landlock-write /tmp/claude line in\n%s", b)
	}
	code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--dry-run", "--", "true")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`--landlock=abstract-unix-socket,signal +# bwrap.args:` + itoa(landlock),
		`--landlock-write=` + regexp.QuoteMeta(real) + ` +# bwrap.args:` + itoa(cwd),
		`--landlock-write=/tmp/claude +# bwrap.args:` + itoa(tmp),
		`--landlock-write=/dev/null +# bwrap.args:` + itoa(landlock),
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
}
