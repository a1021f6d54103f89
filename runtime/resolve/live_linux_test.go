//go:build linux

package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

// check is one probe run inside the sandbox: a shell command and whether it
// must succeed.
type check struct {
	name string
	cmd  string
	ok   bool
}

// sandbox compiles settings, resolves them for home and cwd, runs every
// check inside bubblewrap as uid (0: the caller) and reports the ones that
// did not behave; afterwards it removes the placeholders and returns them.
func sandbox(t *testing.T, uid int, settings, home, cwd string, checks []check) []string {
	t.Helper()
	bw := testenv.Require(t, "bwrap")[0]
	p, diags, err := compiler.CompileFile("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	empty, err := os.MkdirTemp("", "srt-empty-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(empty)
	// The mount point of the run's TMPDIR, as srt makes it.
	if err := os.MkdirAll(bwrap.TmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "srt-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if uid != 0 {
		testenv.Chown(t, tmp, uid, uid)
	}
	// The write roots are bound from descriptors 4 and up, as srt binds
	// them.
	res, err := Resolve(bwrap.Emit(p).Steps, Host{Home: home, Cwd: cwd, TmpDir: tmp, EmptyDir: empty, SeccompFD: 3, BindFD: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	prog := liveSeccomp(t)
	var script strings.Builder
	for _, c := range checks {
		fmt.Fprintf(&script, "if ( %s ) >/dev/null 2>&1; then echo '%s:ok'; else echo '%s:fail'; fi\n", c.cmd, c.name, c.name)
	}
	args := append(append([]string{}, res.Args...), "--chdir", cwd, "--setenv", "HOME", home, "--", "/bin/sh", "-c", script.String())
	out := testenv.RunBwrap(t, bw, args, prog, uid, res.BindFiles...)
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ':')
		if i < 0 {
			continue
		}
		name, v := line[:i], line[i+1:]
		got[name] = v == "ok"
	}
	for _, c := range checks {
		if r, ran := got[c.name]; !ran || r != c.ok {
			t.Errorf("%s (%s): succeeded=%v, want %v", c.name, c.cmd, r, c.ok)
		}
	}
	if t.Failed() {
		t.Logf("bwrap arguments:\n%s", strings.Join(res.Args, "\n"))
	}
	// The caller removes placeholders; they must still be empty.
	for i := len(res.Placeholders) - 1; i >= 0; i-- {
		ph := res.Placeholders[i]
		fi, err := os.Lstat(ph)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			if err := os.Remove(ph); err != nil {
				t.Errorf("placeholder directory %s is not empty: %v", ph, err)
			}
		} else if fi.Size() != 0 {
			t.Errorf("placeholder %s has content", ph)
		} else {
			testenv.Remove(t, ph)
		}
	}
	return res.Placeholders
}

// liveSeccomp is the seccomp program of the plans these tests run.
func liveSeccomp(t *testing.T) []byte {
	t.Helper()
	arch, _ := seccomp.ForGOARCH(goruntime.GOARCH)
	prog, err := seccomp.Build(arch, seccomp.Rules{Unix: true, Namespaces: true}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// liveProject is project() owned by uid, under a directory others can enter.
func liveProject(t *testing.T, uid int) (home, cwd string) {
	t.Helper()
	home, cwd = project(t)
	for d := filepath.Dir(home); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		testenv.Chmod(t, d, 0o755)
	}
	if uid != 0 {
		filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	}
	return home, cwd
}

func tree(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func users() []int {
	if os.Geteuid() == 0 {
		return []int{0, 65534}
	}
	return []int{0}
}

// TestLiveConformance runs the file-system behaviours of docs/reference.md#linux-conformance
// in real sandboxes, as root and as nobody.
func TestLiveConformance(t *testing.T) {
	for _, uid := range users() {
		t.Run(fmt.Sprintf("uid%d", uid), func(t *testing.T) {
			t.Run("typical", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				before := tree(t, home)
				placeholders := sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["~/.ssh", "**/.env"], "allowWrite": ["."], "denyWrite": ["./secrets"]}}`, home, cwd, []check{
					{"1 write in cwd", "echo hi > new.txt", true},
					{"2 write home", "echo x > $HOME/x", false},
					{"3 write /tmp", "echo x > /tmp/srt-live-test-x", false},
					{"5 read denied dir", "cat $HOME/.ssh/id_rsa", false},
					{"5 denied dir is empty", "test -z \"$(ls -A $HOME/.ssh)\"", true},
					{"6 write denied dir (tmpfs)", "echo x > $HOME/.ssh/new", true},
					{"7 read denied glob match", "cat .env", false},
					{"read allowed file", "cat src/main.go", true},
					{"9 write denyWrite", "echo x > secrets/key", false},
					{"9 create in denyWrite", "echo x > secrets/new", false},
					{"10 append .bashrc", "echo x >> .bashrc", false},
					{"11 mkdir .claude/commands", "mkdir -p .claude/commands", false},
					{"12 write .git/config", "echo x > .git/config", false},
					{"12 create hook", "touch .git/hooks/pre-commit", false},
					{"14 write .git/HEAD", "echo x > .git/HEAD", true},
					{"15 mv .git", "mv .git .git2", false},
					{"17 a/b/.bashrc", "echo x > a/b/.bashrc", false},
					{"17 a/b/c/.profile", "echo x > a/b/c/.profile", true},
					{"18 sub/.git/hooks", "mkdir -p sub/.git/hooks && touch sub/.git/hooks/x", false},
					{"18 sub/deeper/.git/hooks", "mkdir -p sub/deeper/.git/hooks && touch sub/deeper/.git/hooks/x", true},
					{"19 write through a symlink to outside", "echo x > link-out", false},
				})
				if _, err := os.Stat(filepath.Join(cwd, "new.txt")); err != nil {
					t.Errorf("a file written in cwd is not on the host: %v", err)
				}
				if _, err := os.Stat(filepath.Join(home, ".ssh", "new")); err == nil {
					t.Error("a file written over a hidden directory reached the host")
				}
				if b, _ := os.ReadFile(filepath.Join(home, "outside.txt")); string(b) != "x\n" {
					t.Errorf("outside.txt changed: %q", b)
				}
				if !contains(placeholders, filepath.Join(cwd, ".bashrc")) {
					t.Errorf("placeholders = %v", placeholders)
				}
				// Nothing left behind but what the command wrote.
				after := tree(t, home)
				var extra []string
				for _, p := range after {
					if !contains(before, p) && !strings.HasSuffix(p, "/new.txt") && !strings.Contains(p, "/.git/HEAD") && !strings.HasSuffix(p, "/.profile") && !strings.Contains(p, "/sub/deeper/.git/hooks") {
						extra = append(extra, p)
					}
				}
				if len(extra) > 0 {
					t.Errorf("left in the user's tree: %v", extra)
				}
			})
			// 20: an allowWrite entry that is a symbolic link is refused
			// (TestWriteRootThroughLink), where the reference leaves it
			// unbound without a word.
			t.Run("patterns under a working directory named with metacharacters", func(t *testing.T) {
				home, _ := liveProject(t, uid)
				cwd := filepath.Join(home, "[x] proj*")
				decoy := filepath.Join(home, "x proj")
				for _, d := range []string{cwd + "/keys", decoy + "/keys"} {
					testenv.MkdirAll(t, d, 0o755)
					testenv.WriteFile(t, d+"/a.pem", []byte("k\n"), 0o644)
					if uid != 0 {
						testenv.Lchown(t, filepath.Dir(d), uid, uid)
						testenv.Lchown(t, d, uid, uid)
						testenv.Lchown(t, d+"/a.pem", uid, uid)
					}
				}
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["**/*.pem"], "allowWrite": ["."], "denyWrite": []}}`, home, cwd, []check{
					{"read the project key", "cat keys/a.pem", false},
					{"write in the project", "echo x > keys/new", true},
				})
			})
			t.Run("allowRead inside denyRead", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["~"], "allowRead": ["~/proj"], "allowWrite": ["."], "denyWrite": []}}`, home, cwd, []check{
					{"read outside", "cat $HOME/outside.txt", false},
					{"read inside", "cat src/main.go", true},
					{"write inside", "echo x > src/new", true},
					{"read .env (only ~ is denied)", "cat .env", true},
				})
			})
			t.Run("more specific deny inside allowRead", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["~", ".env"], "allowRead": ["~/proj", "."], "allowWrite": [], "denyWrite": []}}`, home, cwd, []check{
					{"read the project", "cat src/main.go", true},
					{"27 .env stays denied", "cat .env", false},
				})
			})
			t.Run("denyRead / with allowRead /", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["/"], "allowRead": ["/"], "allowWrite": [], "denyWrite": []}}`, home, cwd, []check{
					{"read anything", "cat $HOME/.ssh/id_rsa", true},
				})
			})
			t.Run("denyWrite above allowWrite", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": [], "allowWrite": [".", "./src"], "denyWrite": ["."]}}`, home, cwd, []check{
					{"write src", "echo x > src/new", false},
					{"write cwd", "echo x > new", false},
				})
			})
			t.Run("root writable", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": [], "allowWrite": ["/"], "denyWrite": []}}`, home, cwd, []check{
					{"write home", "echo x > $HOME/new", true},
					{"write cwd", "echo x > new", true},
					{"append .bashrc", "echo x >> .bashrc", false},
					{"write .git/config", "echo x > .git/config", false},
					{"mv .git", "mv .git .git2", false},
				})
			})
			t.Run("read and write deny on one file", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": [".env", "secrets"], "allowWrite": ["."], "denyWrite": [".env", "secrets"]}}`, home, cwd, []check{
					{"read .env", "cat .env", false},
					{"write .env", "echo x > .env", false},
					{"read secrets", "cat secrets/key", false},
				})
			})
			t.Run("write deny over a read deny's writable restore", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": ["~"], "allowRead": ["~/proj"], "allowWrite": ["."], "denyWrite": ["~"]}}`, home, cwd, []check{
					{"read the project", "cat src/main.go", true},
					{"write the project", "echo x > src/new", false},
				})
			})
			t.Run("13 allowGitConfig", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": [], "allowGitConfig": true}}`, home, cwd, []check{
					{"write .git/config", "echo x > .git/config", true},
					{"create hook", "touch .git/hooks/pre-commit", false},
				})
			})
			t.Run("40 seccomp and no new privileges", func(t *testing.T) {
				home, cwd := liveProject(t, uid)
				sandbox(t, uid, `{"network": {"allowedDomains": [], "deniedDomains": []},
					"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`, home, cwd, []check{
					{"seccomp filter mode", "grep -q '^Seccomp:[[:space:]]*2' /proc/self/status", true},
					{"no new privileges", "grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status", true},
				})
			})
		})
	}
}
