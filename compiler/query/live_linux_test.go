//go:build linux

package query

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/resolve"
)

// liveTree makes a home directory with a project in it; every file holds
// its own name, so a read can be told from a read of something else.
func liveTree(t *testing.T) (home, cwd string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	cwd = filepath.Join(home, "proj")
	for _, d := range []string{".ssh", "cache", "other", "proj/.git/hooks", "proj/src", "proj/secrets", "proj/sub", "proj/a/b/c", "proj/node_modules/m"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range liveFiles {
		if err := os.WriteFile(filepath.Join(home, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, cwd
}

var liveFiles = []string{
	".ssh/id_rsa", "outside.txt", "cred.json", "cache/f", "other/o.txt",
	"proj/src/main.go", "proj/.env", "proj/sub/.env", "proj/secrets/key", "proj/README.md",
	"proj/a/b/.bashrc", "proj/a/b/c/.profile", "proj/.git/config", "proj/.git/HEAD",
	"proj/node_modules/m/.bashrc",
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home, cwd := liveTree(t)
			src := load(t, tc.settings)
			e := src.Evaluator(home, cwd)
			// What exists when srt starts, as the scan sees it.
			before := map[string]bool{}
			filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
				before[p] = err == nil
				return nil
			})
			e.opts.Exists = func(p string) bool { return before[p] }
			got := runLive(t, bw, src, home, cwd)
			checked := 0
			for _, f := range liveFiles {
				p := filepath.Join(home, f)
				if d := e.Read(p, Linux); d.Allow != got.read[f] {
					t.Errorf("read %s: bubblewrap allowed=%v, evaluator says %s by %s (%s)", f, got.read[f], d.Verdict(), d.Rule.Key, d.Why)
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
			t.Logf("%d answers checked against bubblewrap (%d of %d writes reached the host)", checked, allowed, len(got.wrote))
		})
	}
}

type liveResult struct {
	read, wrote map[string]bool
}

// runLive reads and then writes every probe inside the sandbox, and
// judges each on the host.
func runLive(t *testing.T, bw string, src *Source, home, cwd string) liveResult {
	t.Helper()
	empty := t.TempDir()
	res, err := resolve.Resolve(bwrap.Emit(src.Policy).Steps, resolve.Host{Home: home, Cwd: cwd, EmptyDir: empty, SeccompFD: 3})
	if err != nil {
		t.Fatal(err)
	}
	arch := map[string]seccomp.Arch{"amd64": seccomp.X86_64, "arm64": seccomp.AArch64}[goruntime.GOARCH]
	prog, err := seccomp.Build(arch, seccomp.Rules{Unix: true, Namespaces: true}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for _, f := range liveFiles {
		fmt.Fprintf(&script, "printf '%%s\\n' \"read %s $(cat '%s' 2>/dev/null | head -c 200)\"\n", f, filepath.Join(home, f))
	}
	for _, f := range append(append([]string{}, liveFiles...), liveCreate...) {
		fmt.Fprintf(&script, "( printf +w >> '%s' ) 2>/dev/null\n", filepath.Join(home, f))
	}
	script.WriteString("exit 0\n")
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	wr.Write(prog)
	wr.Close()
	defer rd.Close()
	args := append(append([]string{}, res.Args...), "--chdir", cwd, "--setenv", "HOME", home, "--", "/bin/sh", "-c", script.String())
	cmd := exec.Command(bw, args...)
	cmd.ExtraFiles = []*os.File{rd}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwrap: %v\n%s\nargs:\n%s", err, stderr.String(), strings.Join(args, "\n"))
	}
	for i := len(res.Placeholders) - 1; i >= 0; i-- {
		os.Remove(res.Placeholders[i]) // empty mount points, not writes
	}
	r := liveResult{read: map[string]bool{}, wrote: map[string]bool{}}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "read "); ok {
			name, content, _ := strings.Cut(rest, " ")
			r.read[name] = content == name
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
