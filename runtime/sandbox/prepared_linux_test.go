//go:build linux

package sandbox

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/violations"
)

// warmRun is one command's run with a prepared sandbox: its standard
// streams as files, its exit status, and the debug log.
type warmRun struct {
	res            *Result
	stdout, stderr string
	debug          string
	usedPrepared   bool
	notUsedBecause string
}

// runWith runs script in m with p (nil: none), its stdin holding stdin,
// in dir; o's streams are files in a directory of the test.
func runWith(t *testing.T, m *Manager, o Options, p *Prepared, stdin, script string) warmRun {
	t.Helper()
	files := t.TempDir()
	open := func(name, content string) *os.File {
		f, err := os.Create(filepath.Join(files, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(content); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	in, out, errf := open("in", stdin), open("out", ""), open("err", "")
	var debug testenv.SyncBuffer
	o.Stdin, o.Stdout, o.Stderr, o.Prepared = in, out, errf, p
	o.Log = slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
	res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(files, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	w := warmRun{res: res, stdout: read("out"), stderr: read("err"), debug: debug.String()}
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, w.stderr)
	}
	w.usedPrepared = strings.Contains(w.debug, "warm start: the command runs in the prepared sandbox")
	if _, why, ok := strings.Cut(w.debug, "warm start: the prepared sandbox is not used: "); ok {
		w.notUsedBecause, _, _ = strings.Cut(why, "\"")
	}
	return w
}

// TestPreparedRunsCommand: a prepared sandbox runs the command that
// comes later with its own argv, environment, standard streams and exit
// status, its proxies attributing its connections to it, and is used
// once.
func TestPreparedRunsCommand(t *testing.T) {
	testenv.Require(t, "bwrap", "curl")
	port := backend(t)
	m, err := NewManager(compile(t, `"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": ["denied.test"]`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Home: dir, Cwd: dir, Env: append(os.Environ(), "WARM_TEST=from-the-caller")}
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	script := `read line; echo "$line $WARM_TEST"; pwd; echo "$HTTP_PROXY" | sed 's/:[^:@]*@/@/'
` + curl + `http://127.0.0.1:` + port + `/
` + curl + `http://denied.test/
echo to-stderr >&2; exit 3`
	w := runWith(t, m, o, p, "hello\n", script)
	if !w.usedPrepared {
		t.Fatalf("the prepared sandbox was not used (%s); debug:\n%s", w.notUsedBecause, w.debug)
	}
	key := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(violations.Key("/bin/sh -c " + script))
	want := "hello from-the-caller\n" + dir + "\nhttp://srt." + key + "@localhost:3128\n200\n403\n"
	if w.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", w.stdout, want)
	}
	if w.stderr != "to-stderr\n" {
		t.Errorf("stderr %q", w.stderr)
	}
	if w.res.ExitCode != 3 {
		t.Errorf("exit %d, want 3", w.res.ExitCode)
	}
	if got := lines(w.res.Violations); len(got) != 1 || got[0] != "deny network-outbound denied.test:80 (host is on the deny list)" {
		t.Errorf("violations %q", got)
	}
	// Used once: the next run starts its own sandbox.
	again := runWith(t, m, o, p, "", "echo again")
	if again.usedPrepared || again.stdout != "again\n" {
		t.Errorf("second run with the same prepared sandbox: used %v, stdout %q", again.usedPrepared, again.stdout)
	}
}

// TestPreparedNotUsedWhenStale: a sandbox prepared before the host
// changed in a way its plan reads (a file to hide that did not exist) is
// not used; the run starts one that hides the file.
func TestPreparedNotUsedWhenStale(t *testing.T) {
	testenv.Require(t, "bwrap")
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["`+secret+`"], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Home: dir, Cwd: dir}
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := os.WriteFile(secret, []byte("the secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := runWith(t, m, o, p, "", "cat secret.txt 2>/dev/null || echo hidden")
	if w.usedPrepared || !strings.Contains(w.notUsedBecause, "the host changed") {
		t.Errorf("used %v, not used because %q; want it not used because the host changed", w.usedPrepared, w.notUsedBecause)
	}
	if w.stdout != "hidden\n" {
		t.Errorf("the file created after the sandbox was prepared was read: %q", w.stdout)
	}
}

// TestPreparedNotUsed: what a prepared sandbox cannot serve (another
// environment, a stream that is not a file, another policy) runs in a
// sandbox of its own, and says why.
func TestPreparedNotUsed(t *testing.T) {
	testenv.Require(t, "bwrap")
	p1 := compile(t, `"allowedDomains": [], "deniedDomains": []`)
	m, err := NewManager(p1, ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Home: dir, Cwd: dir, Env: os.Environ()}
	for _, c := range []struct {
		name string
		edit func(o *Options) *Manager
		why  string
	}{
		{"environment", func(o *Options) *Manager { o.Env = append(o.Env, "ANOTHER=1"); return m }, "another environment"},
		{"policy", func(o *Options) *Manager {
			m2, err := NewManager(compile(t, `"allowedDomains": ["example.com"], "deniedDomains": []`), ManagerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return m2
		}, "the policy is not the one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := m.Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			o2 := o
			o2.Env = append([]string(nil), o.Env...)
			m2 := c.edit(&o2)
			w := runWith(t, m2, o2, p, "", "echo ran")
			if w.usedPrepared || !strings.Contains(w.notUsedBecause, c.why) || w.stdout != "ran\n" {
				t.Errorf("used %v, not used because %q, stdout %q; want %q", w.usedPrepared, w.notUsedBecause, w.stdout, c.why)
			}
			if p.take() != nil {
				t.Error("the prepared sandbox was left to use again")
			}
		})
	}
	// A stream that is not a file.
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	out, res := sh(t, m, Options{Prepared: p, Env: o.Env}, "echo ran")
	if out != "ran\n" || res.ExitCode != 0 {
		t.Errorf("stdout %q", out)
	}
}

// TestPreparedCloseLeavesNothing: a prepared sandbox no command used
// ends with Close: bubblewrap gone, its scratch directories removed.
func TestPreparedCloseLeavesNothing(t *testing.T) {
	testenv.Require(t, "bwrap")
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := m.Prepare(context.Background(), Options{Home: dir, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := p.p.r
	pid, tmp := r.cmd.Process.Pid, r.tmp
	if tmp == "" {
		t.Fatal("the prepared sandbox has no TMPDIR of its own")
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the prepared sandbox's TMPDIR: %v", err)
	}
	p.Close()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !os.IsNotExist(err) {
		t.Errorf("bubblewrap (pid %d) is still there after Close: %v", pid, err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the prepared sandbox's TMPDIR %s is still there after Close: %v", tmp, err)
	}
	p.Close() // a second Close is a no-op
}

// TestPreparedWithPlaceholders: a sandbox whose plan makes placeholders
// on the host (protected names that do not exist in a write root) is
// used by the command that comes later, and they stay protected.
func TestPreparedWithPlaceholders(t *testing.T) {
	testenv.Require(t, "bwrap")
	dir := t.TempDir()
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Home: dir, Cwd: dir}
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if len(p.p.r.res.Placeholders) == 0 {
		t.Fatal("the plan made no placeholder: the test needs one")
	}
	w := runWith(t, m, o, p, "", `(echo x > .bashrc) 2>/dev/null && echo wrote || echo refused; echo made > ok`)
	if !w.usedPrepared {
		t.Fatalf("the prepared sandbox was not used: %s", w.notUsedBecause)
	}
	if w.stdout != "refused\n" {
		t.Errorf("writing .bashrc in the prepared sandbox: %q, want refused", w.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ok")); err != nil || string(b) != "made\n" {
		t.Errorf("the write root was not written: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".bashrc")); err == nil && len(b) > 0 {
		t.Errorf(".bashrc on the host holds %q", b)
	}
}

// TestPreparedEnvironment: the command in a prepared sandbox gets the
// environment it gets in a sandbox started for it (as bubblewrap leaves
// it: the caller's, then the plan's variables), the proxy password
// aside, which is each run's own.
func TestPreparedEnvironment(t *testing.T) {
	testenv.Require(t, "bwrap")
	m, err := NewManager(compile(t, `"allowedDomains": ["example.com"], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Home: dir, Cwd: dir, Env: append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c", "TMPDIR=/caller/tmp")}
	env := func(p *Prepared) (string, *Result) {
		w := runWith(t, m, o, p, "", "env | sort")
		if (p != nil) != w.usedPrepared {
			t.Fatalf("prepared %v, used %v (%s)", p != nil, w.usedPrepared, w.notUsedBecause)
		}
		out := w.stdout
		for _, s := range w.res.secrets {
			out = strings.ReplaceAll(out, s, "PASSWORD")
		}
		return out, w.res
	}
	cold, _ := env(nil)
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	warm, _ := env(p)
	if cold != warm {
		t.Errorf("the environment in a prepared sandbox differs:\ncold:\n%s\nwarm:\n%s", cold, warm)
	}
	for _, want := range []string{"GIT_CONFIG_COUNT=", "HTTP_PROXY=http://srt.", ":PASSWORD@localhost:3128", "TMPDIR=/tmp/claude"} {
		if !strings.Contains(warm, want) {
			t.Errorf("the environment lacks %q:\n%s", want, warm)
		}
	}
}

// TestPreparedSeesChangesSincePrepared: what changes in the project
// between the sandbox's preparation and its command (a repository made,
// a protected name planted in a directory, a directory replaced by a
// link) is seen by the run that comes later: the prepared sandbox, which
// does not protect it, is not used, and the command cannot write it, or
// does not run (a protected name reached through a link srt refuses).
func TestPreparedSeesChangesSincePrepared(t *testing.T) {
	testenv.Require(t, "bwrap")
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		before []string // directories made before the sandbox is prepared
		change func(dir string) error
		write  string // what the command writes, relative to the project
		fails  string // what the run's error says, when it does not start
	}{
		{"a repository made", nil, func(dir string) error {
			return os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755)
		}, ".git/hooks/pre-commit", ""},
		{"a shell start-up file planted below", []string{"sub"}, func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "sub", ".bashrc"), []byte("# the user's\n"), 0o644)
		}, "sub/.bashrc", ""},
		{"a repository replaced by a link", []string{".git/hooks", "other/gitdir/hooks"}, func(dir string) error {
			if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "old-git")); err != nil {
				return err
			}
			return os.Symlink("other/gitdir", filepath.Join(dir, ".git"))
		}, ".git/hooks/pre-commit", "is a symlink in a writable directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range c.before {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			o := Options{Home: dir, Cwd: dir}
			p, err := m.Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			script := `(echo planted > ` + c.write + `) 2>/dev/null && echo wrote || echo refused`
			if c.fails != "" {
				var debug testenv.SyncBuffer
				o.Prepared = p
				o.Log = slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
				_, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
				if err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Errorf("run: %v; want an error saying %q", err, c.fails)
				}
				if !strings.Contains(debug.String(), "warm start: the prepared sandbox is not used: ") {
					t.Errorf("the prepared sandbox was used; debug:\n%s", debug.String())
				}
			} else {
				w := runWith(t, m, o, p, "", script)
				if w.usedPrepared || !strings.Contains(w.notUsedBecause, "the host changed") {
					t.Errorf("used %v, not used because %q; want it not used because the host changed", w.usedPrepared, w.notUsedBecause)
				}
				if w.stdout != "refused\n" {
					t.Errorf("writing %s, made after the sandbox was prepared: %q, want refused", c.write, w.stdout)
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, c.write)); err == nil && strings.Contains(string(b), "planted") {
				t.Errorf("%s on the host holds %q", c.write, b)
			}
		})
	}
}

// TestPreparedAdoptedBeforeAuditOpen: a command that takes a prepared
// sandbox over before the reader of the second layer's refusals is open
// (a loaded machine, a command that comes at once) runs and ends.
func TestPreparedAdoptedBeforeAuditOpen(t *testing.T) {
	testenv.Require(t, "bwrap")
	landlockOpenDelay = 500 * time.Millisecond
	t.Cleanup(func() { landlockOpenDelay = 0 })
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Home: dir, Cwd: dir}
	p, err := m.Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	done := make(chan warmRun, 1)
	go func() { done <- runWith(t, m, o, p, "", "echo ran") }()
	select {
	case w := <-done:
		if !w.usedPrepared || w.stdout != "ran\n" {
			t.Errorf("used the prepared sandbox %v (%s), stdout %q", w.usedPrepared, w.notUsedBecause, w.stdout)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the command in the prepared sandbox did not end within 60 s: its start waits for a reader that is never handed over")
	}
}
