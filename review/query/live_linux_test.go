//go:build linux

package query

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/gitconfig"
	"srt.dev/runtime/resolve"
)

// liveTree makes a home directory with a project in it; every file holds
// its own name, so a read can be told from a read of something else.
func liveTree(t *testing.T, uid int) (home, cwd string) {
	t.Helper()
	root := t.TempDir()
	home = filepath.Join(root, "home")
	cwd = filepath.Join(home, "proj")
	for _, d := range []string{".ssh", "cache", "other", "proj/.git/hooks", "proj/src", "proj/secrets", "proj/sub", "proj/a/b/c", "proj/node_modules/m", ".config/git"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range liveFiles {
		if err := os.WriteFile(filepath.Join(home, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if uid != 0 {
		// Another user must reach the tree and own it, as a user owns
		// their home.
		for d := root; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	}
	return home, cwd
}

// liveUsers are the users the live test runs the sandbox as.
func liveUsers() []int {
	if os.Geteuid() == 0 {
		return []int{0, 65534}
	}
	return []int{os.Geteuid()}
}

var liveFiles = []string{
	".ssh/id_rsa", "outside.txt", "cred.json", "cache/f", "other/o.txt",
	"proj/src/main.go", "proj/.env", "proj/sub/.env", "proj/secrets/key", "proj/README.md",
	"proj/a/b/.bashrc", "proj/a/b/c/.profile", "proj/.git/config", "proj/.git/HEAD",
	"proj/node_modules/m/.bashrc", ".gitconfig", ".config/git/config",
}

// liveCreate are files that do not exist; writing one creates it.
var liveCreate = []string{"new.txt", ".ssh/new", "cache/new", "proj/new.txt", "proj/secrets/new", "proj/.bashrc", "proj/.git/hooks/pre-commit", "proj/src/.vscode", "other/new"}

// TestLiveAgreesWithBubblewrap runs the resolved plan of several policies
// in real bubblewrap and checks that every read and write the command
// attempts succeeds exactly when the evaluator says Linux allows it. A
// read succeeds when the command sees the host's content; a write when the
// change reaches the host.
func TestLiveAgreesWithBubblewrap(t *testing.T) {
	bw := testenv.Require(t, "bwrap")[0]
	cases := []struct{ name, settings string }{
		{"typical", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~/.ssh", "**/.env", "~/cred.json"], "allowRead": ["./sub/.env"],
				"allowWrite": [".", "~/cache"], "denyWrite": ["./secrets"]}}`},
		{"home denied, project reopened", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~"], "allowRead": ["~/proj"], "allowWrite": ["./src", "~/other"], "denyWrite": []}}`},
		{"deny above a write root", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~/cache"], "allowWrite": ["~"], "denyWrite": ["~/proj"]}}`},
		{"search depth 1, git config allowed", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": ["~"], "denyWrite": [], "allowGitConfig": true},
			"mandatoryDenySearchDepth": 1}`},
		{"a write root denied and an allow of the same path", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~/cache", "~/other", "./src"], "allowRead": ["~/other", "./src/main.go"], "allowWrite": ["~/cache", "~/other", "."], "denyWrite": []}}`},
		{"disabled", `{"network": {"allowedDomains": [], "deniedDomains": []},
			"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": [], "denyWrite": [], "disabled": true}}`},
		{"credential masks", `{"network": {"allowedDomains": ["api.example.com"], "deniedDomains": [], "tlsTerminate": {}},
			"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
			"credentials": {"files": [{"path": "~/cred.json", "mode": "mask"}, {"path": "./.env", "mode": "mask"}, {"path": "~/outside.txt", "mode": "deny"}]}}`},
	}
	for _, uid := range liveUsers() {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("uid%d/%s", uid, tc.name), func(t *testing.T) {
				liveCase(t, bw, uid, tc.settings)
			})
		}
	}
}

// liveCase runs one policy in bubblewrap as uid and compares every answer.
func liveCase(t *testing.T, bw string, uid int, settings string) {
	home, cwd := liveTree(t, uid)
	src := load(t, settings)
	e := src.Evaluator(home, cwd)
	// What exists when srt starts, as the scan sees it.
	before := map[string]bool{}
	filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
		before[p] = err == nil
		return nil
	})
	e.opts.Exists = func(p string) bool { return before[p] }
	got := runLive(t, bw, src, home, cwd, uid)
	checked := 0
	for _, f := range liveFiles {
		p := filepath.Join(home, f)
		d := e.Read(p, Linux)
		// A masked file reads as its masked copy, never the real
		// content; anything else reads as itself or not at all.
		want := ""
		switch {
		case d.Allow && strings.HasPrefix(d.Rule.Key, "credentials."):
			want = "MASKED " + f
		case d.Allow:
			want = f
		}
		if got.read[f] != want {
			t.Errorf("read %s: bubblewrap showed %q (cat said %q), evaluator says %s by %s (%s)", f, got.read[f], got.why[f], d.Verdict(), d.Rule.Key, d.Why)
		}
		if d := e.Write(p, Linux); d.Allow != got.wrote[f] {
			t.Errorf("write %s: bubblewrap allowed=%v, evaluator says %s by %s (%s)", f, got.wrote[f], d.Verdict(), d.Rule.Key, d.Why)
		}
		checked += 2
	}
	for _, f := range liveCreate {
		if d := e.Write(filepath.Join(home, f), Linux); d.Allow != got.wrote[f] {
			t.Errorf("create %s: bubblewrap allowed=%v, evaluator says %s by %s (%s)", f, got.wrote[f], d.Verdict(), d.Rule.Key, d.Why)
		}
		checked++
	}
	allowed := 0
	for _, ok := range got.wrote {
		if ok {
			allowed++
		}
	}
	seen, masked := 0, 0
	for f, content := range got.read {
		switch {
		case content == f:
			seen++
		case strings.HasPrefix(content, "MASKED "):
			masked++
		}
	}
	t.Logf("%d answers checked against bubblewrap (%d of %d files read, %d as masked copies; %d of %d writes reached the host)", checked, seen, len(liveFiles), masked, allowed, len(got.wrote))
}

type liveResult struct {
	read  map[string]string // what the command read of each file
	why   map[string]string // what cat said when it could not read one
	wrote map[string]bool
}

// runLive reads and then writes every probe inside the sandbox, and
// judges each on the host.
func runLive(t *testing.T, bw string, src *Source, home, cwd string, uid int) liveResult {
	t.Helper()
	empty := t.TempDir()
	os.Chmod(empty, 0o755)
	masked := t.TempDir()
	os.Chmod(masked, 0o755)
	n := 0
	maskedCopy := func(_, p string) (string, error) {
		n++
		name := filepath.Join(masked, fmt.Sprint(n))
		rel, _ := filepath.Rel(home, p)
		return name, os.WriteFile(name, []byte("MASKED "+rel), 0o644)
	}
	// The run's TMPDIR and its mount point, as srt makes them.
	os.MkdirAll(bwrap.TmpDir, 0o755)
	tmp := t.TempDir()
	os.Chown(tmp, uid, uid)
	res, err := resolve.Resolve(bwrap.Emit(src.Policy).Steps, resolve.Host{Home: home, Cwd: cwd, EmptyDir: empty, SeccompFD: 3, MaskedCopy: maskedCopy, TmpDir: tmp,
		GitHost: gitconfig.ReadOutside(home, nil).Files})
	if err != nil {
		t.Fatal(err)
	}
	arch, _ := seccomp.ForGOARCH(goruntime.GOARCH)
	prog, err := seccomp.Build(arch, seccomp.Rules{Unix: true, Namespaces: true}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for _, f := range liveFiles {
		fmt.Fprintf(&script, "printf '%%s\\n' \"read %s $(cat '%s' 2>/dev/null | head -c 200)\"\n", f, filepath.Join(home, f))
		fmt.Fprintf(&script, "printf '%%s\\n' \"why %s $(cat '%s' 2>&1 >/dev/null | head -c 200)\"\n", f, filepath.Join(home, f))
	}
	for _, f := range append(append([]string{}, liveFiles...), liveCreate...) {
		fmt.Fprintf(&script, "( printf +w >> '%s' ) 2>/dev/null\n", filepath.Join(home, f))
	}
	script.WriteString("exit 0\n")
	args := append(append([]string{}, res.Args...), "--chdir", cwd, "--setenv", "HOME", home, "--", "/bin/sh", "-c", script.String())
	out := testenv.RunBwrap(t, bw, args, prog, uid)
	for i := len(res.Placeholders) - 1; i >= 0; i-- {
		os.Remove(res.Placeholders[i]) // empty mount points, not writes
	}
	r := liveResult{read: map[string]string{}, why: map[string]string{}, wrote: map[string]bool{}}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "read "); ok {
			name, content, _ := strings.Cut(rest, " ")
			r.read[name] = content
		}
		if rest, ok := strings.CutPrefix(line, "why "); ok {
			name, why, _ := strings.Cut(rest, " ")
			r.why[name] = why
		}
	}
	for _, f := range liveFiles {
		b, _ := os.ReadFile(filepath.Join(home, f))
		r.wrote[f] = string(b) == f+"+w"
	}
	for _, f := range liveCreate {
		b, err := os.ReadFile(filepath.Join(home, f))
		r.wrote[f] = err == nil && string(b) == "+w"
	}
	return r
}
