package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/emit/bwrap"
)

// resolveText resolves a plan written by hand (lines numbered from 1) on
// the project of project(t), with tmp as the run's TMPDIR.
func resolveText(t *testing.T, text, home, cwd, tmp string) (*Result, error) {
	t.Helper()
	p, err := bwrap.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return Resolve(p.Steps, Host{Home: home, Cwd: cwd, TmpDir: tmp, EmptyDir: t.TempDir()})
}

// agreeing is a plan whose two layers agree: the mounts bind the project
// and the run's TMPDIR writable, the second layer grants both.
const agreeing = `--ro-bind / /
@allow-write ${CWD}
@private-tmp /tmp/claude
@landlock grant=/dev/null scope=signal
@landlock-write ${CWD}
@landlock-write /tmp/claude
`

// TestLandlockLines: the second layer is read from its own lines, one
// write root per @landlock-write line, as @allow-write reads its paths
// (a device, a path that does not exist, a link leading outside itself
// grant nothing; a pattern grants what it matches; /tmp/claude is the
// run's TMPDIR at its place inside), each with its line; the grants of
// @landlock follow, with the @landlock line.
func TestLandlockLines(t *testing.T) {
	home, cwd := project(t)
	res, err := resolveText(t, `--ro-bind / /
@allow-write ${CWD}
@allow-write ${HOME}/other
@private-tmp /tmp/claude
@landlock grant=/dev/null,/dev/pts scope=signal
@landlock-write /dev/stdout
@landlock-write ${CWD}
@landlock-write:unless-hidden ${HOME}/.npm/_logs
@landlock-write:pattern ${HOME}/oth*
@landlock-write ${CWD}/other-link
@landlock-write /tmp/claude
@landlock-write ${CWD}/src
`, home, cwd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := &Landlock{
		Write:  []string{cwd, home + "/other", "/tmp/claude", cwd + "/src", "/dev/null", "/dev/pts"},
		Lines:  []int{7, 9, 11, 12, 5, 5},
		Scopes: []string{"signal"},
		Line:   5,
	}
	if diff := cmp.Diff(want, res.Landlock); diff != "" {
		t.Errorf("Landlock (-want +got):\n%s", diff)
	}
}

// TestLandlockNotFromBinds: what the second layer grants is what its
// lines say, whatever the mounts bind: a plan may grant the second layer
// more than the mounts make writable (the mounts still refuse it), and
// the write roots it grants are not the ones bound.
func TestLandlockNotFromBinds(t *testing.T) {
	home, cwd := project(t)
	res, err := resolveText(t, `--ro-bind / /
@allow-write ${CWD}
@landlock grant= scope=
@landlock-write ${HOME}
`, home, cwd, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{home}, res.Landlock.Write); diff != "" {
		t.Errorf("Landlock.Write (-want +got):\n%s", diff)
	}
	args := strings.Join(res.Args, " ")
	if !strings.Contains(args, "--bind "+cwd+" "+cwd) || strings.Contains(args, "--bind "+home+" ") {
		t.Errorf("the mounts should bind the project only:\n%s", args)
	}
}

// TestLayersDisagree: a plan whose writable mounts reach beyond the second
// layer's write roots is refused, naming the line, what it binds and that
// the two layers disagree; every way of weakening the mounts in the plan
// is one. The comparison reads paths only: it does not ask the kernel
// whether it has Landlock.
func TestLayersDisagree(t *testing.T) {
	home, cwd := project(t)
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".npm", "_logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The lines of agreeing, each with its number.
	base := strings.SplitAfter(agreeing, "\n")
	edit := func(n int, line string) string { // line n replaced
		out := append([]string(nil), base...)
		out[n-1] = line + "\n"
		return strings.Join(out, "")
	}
	without := func(ns ...int) string { // lines ns left out
		var out []string
		for i, l := range base {
			keep := true
			for _, n := range ns {
				keep = keep && i+1 != n
			}
			if keep {
				out = append(out, l)
			}
		}
		return strings.Join(out, "")
	}
	const disagree = ": the two layers disagree: "
	for _, tc := range []struct {
		name, plan string
		want       []string // in the error, in this order; none: no error
	}{
		{"as compiled", agreeing, nil},

		// The three ways of weakening the mounts.
		{"root bound writable", edit(1, "--bind / /"),
			[]string{"bwrap.args:1" + disagree + `"--bind / /" binds / writable, and / is outside the second layer's (Landlock's) write roots: ` + cwd + ", /tmp/claude (its @landlock-write lines)", "recompile the plan with srtc compile, or undo the edit"}},
		{"write root one level up", edit(2, "@allow-write "+home),
			[]string{"bwrap.args:2" + disagree + "@allow-write " + home + `: "--bind ` + home + " " + home + `" binds ` + home + " writable, and " + home + " is outside"}},
		{"a bind added", agreeing + "--bind ${HOME}/other ${HOME}/other\n",
			[]string{"bwrap.args:7" + disagree + `"--bind ` + home + "/other " + home + `/other" binds ` + home + "/other writable, and " + home + "/other is outside"}},

		// Every option that binds host files writable.
		{"--bind-try added", agreeing + "--bind-try ${HOME}/other ${HOME}/other\n", []string{"bwrap.args:7" + disagree + `"--bind-try `}},
		{"--dev-bind added", agreeing + "--dev-bind ${HOME}/other ${HOME}/other\n", []string{"bwrap.args:7" + disagree + `"--dev-bind `}},
		{"--dev-bind-try added", agreeing + "--dev-bind-try ${HOME}/other ${HOME}/other\n", []string{"bwrap.args:7" + disagree + `"--dev-bind-try `}},
		{"a host directory bound into a write root", agreeing + "--bind ${HOME}/other ${CWD}/other\n",
			[]string{"bwrap.args:7" + disagree + `"--bind ` + home + "/other " + cwd + `/other" binds ` + home + "/other writable at " + cwd + "/other, and " + home + "/other is outside"}},
		{"a source that is a link leading out", agreeing + "--bind ${CWD}/other-link ${CWD}/other-link\n",
			[]string{"bwrap.args:7" + disagree, "and " + home + "/other is outside"}},
		{"a destination that is a link leading out", agreeing + "--bind ${CWD}/src ${CWD}/other-link\n",
			[]string{"bwrap.args:7" + disagree, "and " + home + "/other is outside"}},
		{"a descriptor of bubblewrap's", agreeing + "--bind /proc/self/fd/5 ${CWD}/x\n",
			[]string{`bwrap.args:7: "--bind /proc/self/fd/5 ` + cwd + `/x": the second layer (Landlock) cannot be compared with what bubblewrap finds through /proc/self/fd/5`}},
		{"another process's files", agreeing + "--bind /proc/1/root/etc ${CWD}/etc\n",
			[]string{`bwrap.args:7: "--bind /proc/1/root/etc ` + cwd + `/etc": the second layer (Landlock) cannot be compared`}},
		{"an overlay written outside", agreeing + "--overlay-src ${CWD}/src\n--overlay ${HOME}/other ${CWD}/work ${CWD}/src\n",
			[]string{"bwrap.args:8" + disagree, "and " + home + "/other is outside"}},
		{"the run's TMPDIR without its @landlock-write line", without(6),
			[]string{"bwrap.args:3" + disagree + "@private-tmp /tmp/claude: \"--bind " + tmp + " /tmp/claude\" binds " + tmp + " writable at /tmp/claude, and " + tmp + " is outside"}},
		{"a plan of an older srtc", without(5, 6),
			[]string{"bwrap.args:2" + disagree, "the plan has no @landlock-write line, as a plan compiled by an older srtc has none"}},

		// What cannot be compared, or ends bubblewrap's options.
		{"--bind-fd", agreeing + "--bind-fd 3 /x\n", []string{"bwrap.args:7: --bind-fd: the second layer (Landlock) cannot be compared"}},
		{"--args", agreeing + "--args 3\n", []string{"bwrap.args:7: --args: the second layer (Landlock) cannot be compared"}},
		{"--", agreeing + "-- sh\n", []string{`bwrap.args:7: "--" where bubblewrap expects an option`}},
		{"a command word", agreeing + "--unshare-pid sh\n", []string{`bwrap.args:7: "sh" where bubblewrap expects an option`}},
		{"an unknown option", agreeing + "--frobnicate\n", []string{"bwrap.args:7: --frobnicate: srt does not know this bubblewrap option"}},

		// What the second layer says of itself.
		{"no @landlock line", without(4, 5, 6), []string{"the plan has no @landlock line", "recompile it with srtc compile"}},
		{"two @landlock lines", agreeing + "@landlock grant= scope=\n", []string{"line 7: a second @landlock line (the first is line 4)"}},
		{"@landlock off with write roots", edit(4, "@landlock off"), []string{"line 5: @landlock-write with @landlock off (line 4)"}},

		// What writes no host file beyond the second layer.
		{"read-only binds, a tmpfs, a copied file", agreeing + "--ro-bind ${HOME} ${HOME}\n--ro-bind-try /etc /etc\n--tmpfs ${HOME}/x\n--file 3 ${HOME}/f\n--bind-data 3 ${HOME}/g\n", nil},
		{"a bind inside a write root", agreeing + "--bind ${CWD}/src ${CWD}/src\n", nil},
		{"operands that read as options", agreeing + "--setenv X --bind\n--chdir --bind\n", nil},
		{"the host's /proc (enableWeakerNestedSandbox)", agreeing + "--bind /proc /proc\n", nil},
		{"a second layer wider than the mounts", agreeing + "@landlock-write ${HOME}\n", nil},
		{"@landlock off", "--bind / /\n@landlock off\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := resolveText(t, tc.plan, home, cwd, tmp)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if strings.HasPrefix(tc.plan, "--bind / /") != (res.Landlock == nil) {
					t.Errorf("Landlock = %+v", res.Landlock)
				}
				return
			}
			if err == nil {
				t.Fatalf("resolved; want an error with %q", tc.want)
			}
			msg, at := err.Error(), 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error:\n%s\nwant, after position %d:\n%s", msg, at, w)
				}
				at += i + len(w)
			}
		})
	}
}

// TestLayersDisagreePlanName: with Host.Plan, the refusal names the file.
func TestLayersDisagreePlanName(t *testing.T) {
	home, cwd := project(t)
	p, err := bwrap.Parse([]byte(strings.Replace(agreeing, "--ro-bind / /", "--bind / /", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(p.Steps, Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), Plan: "plan/linux/bwrap.args"})
	if err == nil || !strings.HasPrefix(err.Error(), "plan/linux/bwrap.args:1: the two layers disagree: ") {
		t.Errorf("error %v, want it to start with plan/linux/bwrap.args:1: the two layers disagree", err)
	}
	_, err = Resolve([]bwrap.Step{{Args: []string{"--ro-bind", "/", "/"}, Line: 1}}, Host{Home: home, Cwd: cwd, Plan: "plan/linux/bwrap.args"})
	if err == nil || !strings.HasPrefix(err.Error(), "plan/linux/bwrap.args: the plan has no @landlock line") {
		t.Errorf("error %v, want it to start with plan/linux/bwrap.args: the plan has no @landlock line", err)
	}
}

// TestLayersAgreeCompiled: every shape of compiled plan whose mounts make
// host files writable resolves, its second layer granting what the mounts
// bind writable, no more than its write roots: the run's TMPDIR (restored
// inside a read deny too), a write root inside a read deny, the root
// itself, globs, a convenience directory, the host's /proc.
func TestLayersAgreeCompiled(t *testing.T) {
	home, cwd := project(t)
	if err := os.MkdirAll(filepath.Join(home, ".npm", "_logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := home + "/.npm/_logs"
	// The read deny of /tmp hides the convenience directory when the
	// test's home is below /tmp, as it usually is.
	tmpLogs := []string{logs, "/tmp/claude"}
	if within(logs, "/tmp") {
		tmpLogs = []string{"/tmp/claude"}
	}
	for _, tc := range []struct {
		name, settings string
		write          []string // Landlock.Write before the grants; nil: no second layer
	}{
		{"the project", `"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}`, []string{logs, cwd, "/tmp/claude"}},
		{"the root", `"filesystem": {"denyRead": [], "allowWrite": ["/"], "denyWrite": ["~/.ssh"]}`, []string{logs, "/", "/tmp/claude"}},
		{"TMPDIR under a read deny", `"filesystem": {"denyRead": ["/tmp"], "allowWrite": [], "denyWrite": []}`, tmpLogs},
		{"a write root under a read deny", `"filesystem": {"denyRead": ["~"], "allowWrite": ["."], "denyWrite": []}`, []string{cwd, "/tmp/claude"}},
		{"globs", `"filesystem": {"denyRead": [], "allowWrite": ["./a/*", "~/oth*"], "denyWrite": []}`, []string{logs, cwd + "/a/b", home + "/other", "/tmp/claude"}},
		{"the host's /proc", `"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}, "enableWeakerNestedSandbox": true, "allowNestedUserNamespaces": true`, []string{logs, cwd, "/tmp/claude"}},
		{"disabled", `"filesystem": {"disabled": true, "denyRead": [], "allowWrite": [], "denyWrite": []}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, ` + tc.settings + `}`
			// The write roots bound from their descriptors, as srt binds them.
			res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, BindFD: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			if len(tc.write) > 1 && !strings.Contains(strings.Join(res.Args, " "), "--bind /proc/self/fd/7 ") {
				t.Errorf("no write root bound from descriptor 7:\n%s", strings.Join(res.Args, "\n"))
			}
			if tc.write == nil {
				if res.Landlock != nil {
					t.Errorf("a second layer: %+v", res.Landlock)
				}
				return
			}
			var got []string
			for i, p := range res.Landlock.Write {
				if res.Landlock.Lines[i] == res.Landlock.Line && strings.HasPrefix(p, "/dev/") || p == "/proc" {
					continue
				}
				got = append(got, p)
			}
			if diff := cmp.Diff(tc.write, got); diff != "" {
				t.Errorf("Landlock.Write without the grants (-want +got):\n%s", diff)
			}
		})
	}
}
