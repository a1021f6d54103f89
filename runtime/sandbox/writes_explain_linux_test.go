//go:build linux

package sandbox

import (
	"strings"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/violations"
)

// TestWriteSuggest: the directory a refusal line says to add, written by
// hand for where Go, npm, pnpm and git write.
func TestWriteSuggest(t *testing.T) {
	x := &writeExplainer{home: "/home/me", cwd: "/home/me/proj"}
	for _, c := range []struct {
		path string
		dir  bool
		want string
	}{
		{"/home/me/.cache/go-build/ab/abcdef-d", false, "~/.cache/go-build"},
		{"/home/me/.cache/go-build", true, "~/.cache/go-build"},
		{"/home/me/.cache", true, "~/.cache"},
		{"/home/me/.config", true, "~/.config"},
		{"/home/me/.npm/_cacache/tmp/x", false, "~/.npm"},
		{"/home/me/.npm", true, "~/.npm"},
		{"/home/me/x", false, "~/x"},
		{"/home/me/go", true, "~/go"},
		{"/home/me/.local/share/pnpm/store/v3/x", false, "~/.local/share/pnpm"},
		{"/home/me/proj/out/x.o", false, "."},
		{"/srv/repo.git/objects/tmp_objdir-incoming-x", true, "/srv/repo.git"},
		{"/etc/foo", false, "/etc/foo"},
		{"/root/.cache/go-build/21/215b-a", false, "/root/.cache/go-build"},
		{"/root/.local/share/pnpm/store/x", false, "/root/.local/share/pnpm"},
		{"/foo", false, "/foo"},
	} {
		if got := x.suggest(c.path, c.dir); got != c.want {
			t.Errorf("suggest(%q, dir %v) = %q, want %q", c.path, c.dir, got, c.want)
		}
	}
}

// TestWriteExplain: the refusal line names the step of the plan behind
// the mount that refused, read from the plan's comments as srt reads a
// plan: a write deny, a protected name, srt's own files, or no write root.
func TestWriteExplain(t *testing.T) {
	steps := []bwrap.Step{
		{Args: []string{"--ro-bind", "/", "/"}, Line: 1},
		{Directive: bwrap.AllowWrite, Operand: "${CWD}", Line: 2, Comment: "filesystem.allowWrite[0] s.json:3:18"},
		{Directive: bwrap.DenyWrite, Operand: "${CWD}/secret", Line: 3, Comment: "filesystem.denyWrite[0] s.json:4:18"},
		{Directive: bwrap.DenyWrite, Operand: "${CWD}/.bashrc", Line: 4, Comment: "mandatory"},
		{Args: []string{"--ro-bind-try", "/proc/sys", "/proc/sys"}, Line: 5, Comment: "srt: kernel settings"},
	}
	res := &resolve.Result{
		Args:  []string{"--ro-bind", "/", "/", "--bind", "/home/me/proj", "/home/me/proj", "--ro-bind", "/home/me/proj/secret", "/home/me/proj/secret", "--ro-bind", "/x", "/home/me/proj/.bashrc", "--ro-bind-try", "/proc/sys", "/proc/sys"},
		Lines: []int{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5},
	}
	x := newWriteExplainer(&policy.Policy{Source: "s.json"}, res, steps, "/home/me", "/home/me/proj", map[policy.StateKind][]string{policy.StateRegistry: {"/home/me/.cache/srt/placeholders"}})
	for _, c := range []struct {
		path, access, want string
	}{
		{"/home/me/.npm", "mkdir", `srt sandbox refused creating the directory /home/me/.npm: no write root covers it. To allow it, add "~/.npm" to filesystem.allowWrite in s.json.`},
		{"/home/me/.config", "mkdir", `srt sandbox refused creating the directory /home/me/.config: no write root covers it. To allow it, add the directory the tool writes below ~/.config to filesystem.allowWrite in s.json.`},
		// A new file at the top of the home directory: adding it as it is
		// would make it a directory.
		{"/home/me/x", "create", `srt sandbox refused creating /home/me/x: no write root covers it. To allow it, create ~/x on the host first (srt makes a write root that does not exist a directory), then add "~/x" to filesystem.allowWrite in s.json.`},
		{"/home/me/.cache/x", "create", `srt sandbox refused creating /home/me/.cache/x: no write root covers it. To allow it, create ~/.cache/x on the host first (srt makes a write root that does not exist a directory), then add "~/.cache/x" to filesystem.allowWrite in s.json.`},
		{"/etc/foo", "create", `srt sandbox refused creating /etc/foo: no write root covers it. To allow it, create /etc/foo on the host first (srt makes a write root that does not exist a directory), then add "/etc/foo" to filesystem.allowWrite in s.json.`},
		{"/home/me/l", "symlink", `srt sandbox refused creating the symbolic link /home/me/l: no write root covers it, and none narrower than its directory can allow it (srt makes a write root that does not exist a directory, and a file one cannot be replaced). To allow it, have the command make it in a directory of its own and add that directory to filesystem.allowWrite in s.json, or make ~/l on the host.`},
		{"/home/me/b", "rename-to", `srt sandbox refused moving a file to /home/me/b: no write root covers it, and none narrower`},
		// A name the command chose is quoted: no line break of its own.
		{"/home/me/a\nb", "create", `srt sandbox refused creating "/home/me/a\nb": no write root covers it. To allow it, create "~/a\nb" on the host first`},
		// Below a tool's directory, the directory, which srt makes.
		{"/home/me/.npm/_cacache/x", "create", `srt sandbox refused creating /home/me/.npm/_cacache/x: no write root covers it. To allow it, add "~/.npm" to filesystem.allowWrite in s.json.`},
		{"/srv/repo/x", "symlink", `srt sandbox refused creating the symbolic link /srv/repo/x: no write root covers it. To allow it, add "/srv/repo" to filesystem.allowWrite in s.json.`},
		{"/home/me/proj/secret", "write", `srt sandbox refused writing /home/me/proj/secret: filesystem.denyWrite[0] (s.json:4:18) makes it read-only. To allow it, remove that entry from filesystem.denyWrite in s.json.`},
		{"/home/me/proj/.bashrc", "write", `srt sandbox refused writing /home/me/proj/.bashrc: srt protects it whatever the settings say`},
		{"/home/me/.cache/srt/placeholders/registry.lock", "write", `srt sandbox refused writing /home/me/.cache/srt/placeholders/registry.lock: it is srt's own (/home/me/.cache/srt/placeholders), which every sandbox keeps read-only whatever the settings say`},
		{"/proc/sys/kernel/hostname", "write", `srt sandbox refused writing /proc/sys/kernel/hostname: srt keeps it read-only whatever the settings say (kernel settings).`},
	} {
		got := x.explain(violations.FileRefusal{Time: time.Now(), Path: c.path, Access: c.access}).Why
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("%s %s:\n got %s\nwant %s", c.access, c.path, got, c.want)
		}
	}
}

// TestManagerRefusedWrites: a library user of Manager gets the writes the
// sandbox refused in the result, through OnViolation and in the store,
// with the refusal line; none with the watch off, and no write that
// succeeded.
func TestManagerRefusedWrites(t *testing.T) {
	testenv.Require(t, "bwrap")
	var seen []violations.Entry
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["./out"], "denyWrite": []}}`),
		ManagerOptions{OnViolation: func(e violations.Entry) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	script := `mkdir -p out; echo x > out/ok; echo x > refused 2>/dev/null; echo done`
	out, res := sh(t, m, Options{}, script)
	if out != "done\n" || len(res.Violations) != 1 || len(seen) != 1 || m.Violations().Total() != 1 {
		t.Fatalf("out %q, violations %+v, seen %d, stored %d", out, res.Violations, len(seen), m.Violations().Total())
	}
	if e := res.Violations[0]; !strings.HasSuffix(e.Line, "/refused (create: outside the write roots)") || !strings.Contains(e.Why, `To allow it, create ~/refused on the host first (srt makes a write root that does not exist a directory), then add "~/refused" to filesystem.allowWrite in settings.json.`) {
		t.Errorf("violation %q, why %q", e.Line, e.Why)
	}
	_, res = sh(t, m, Options{NoWriteWatch: true}, script)
	if len(res.Violations) != 0 {
		t.Errorf("with the watch off: %+v", res.Violations)
	}
}

// TestRefusedWritesLateCheck: a check of a watched call made after the
// sandbox has ended still sees the sandbox's mounts: a file written in a
// write root is not reported as refused (through the sandbox's root, the
// host's read-only root would show below an unmounted write root).
func TestRefusedWritesLateCheck(t *testing.T) {
	testenv.Require(t, "bwrap")
	judgeDelay = 300 * time.Millisecond
	defer func() { judgeDelay = 0 }()
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["./out"], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, res := sh(t, m, Options{}, `mkdir -p out; echo x > out/ok; echo done`)
	if out != "done\n" || len(res.Violations) != 0 {
		t.Fatalf("out %q, violations %+v", out, res.Violations)
	}
}
