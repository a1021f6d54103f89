//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// gitEnv is an environment in which git needs no user configuration.
func gitEnv(home string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test",
		"GIT_CONFIG_NOSYSTEM=1",
	}
}

// hostGit runs git in dir on the host, as the user would after the run.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t.TempDir())
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// project makes a working directory below a private home; with repo, a
// git repository with one commit.
func gitProject(t *testing.T, repo bool) (home, dir string) {
	t.Helper()
	home = t.TempDir()
	dir = filepath.Join(home, "proj")
	testenv.Mkdir(t, dir, 0o755)
	testenv.WriteFile(t, filepath.Join(dir, "main.txt"), []byte("hello\n"), 0o644)
	if repo {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "first"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = gitEnv(home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	return home, dir
}

// runIn runs script with allowWrite ["."] in dir and returns its exit
// code, stdout and stderr.
func runIn(t *testing.T, home, dir, script string) (int, string, string) {
	t.Helper()
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	o := Options{Home: home, Cwd: dir, Env: gitEnv(home), Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("")}
	res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errb.String())
	}
	return res.ExitCode, out.String(), errb.String()
}

// TestGitAddAllInSandbox: the protection of absent names does not trip
// tools that walk the project: git add -A and git commit work in a
// repository with allowWrite ["."], and the absent names still cannot
// be created.
func TestGitAddAllInSandbox(t *testing.T) {
	testenv.Require(t, "bwrap", "git")
	home, dir := gitProject(t, true)
	code, out, errOut := runIn(t, home, dir, `
echo more > new.txt
git add -A && git commit -qm second && echo committed
git status --porcelain; git submodule status
find . -path ./.git -prune -o -type c -print
for n in .bashrc .gitconfig .mcp.json .vscode/settings.json .idea/x .claude/commands/x; do
  mkdir -p "$(dirname "$n")" 2>/dev/null; (echo x > "$n") 2>/dev/null && echo "created $n"
done
true`)
	if code != 0 || out != "committed\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %s; want only \"committed\"", code, out, errOut)
	}
	if got := hostGit(t, dir, "log", "--format=%s"); got != "second\nfirst\n" {
		t.Errorf("host git log: %q", got)
	}
	if got := hostGit(t, dir, "show", "--name-only", "--format=", "HEAD"); got != "new.txt\n" {
		t.Errorf("the commit holds %q; want only new.txt", got)
	}
}

// hook is a script that appends its name to the file mark when it runs.
func hook(mark, name string) string {
	return "#!/bin/sh\necho " + name + " >> " + mark + "\n"
}

// writeScript writes an executable script on the host.
func writeScript(t *testing.T, path, text string) {
	t.Helper()
	testenv.MkdirAll(t, filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestProtectedNamesCreatedDuringRun: protected names that do not exist
// when the sandbox starts, written during the run, are gone from the
// tree when srt returns, so that the user's next git command or shell on
// the host does not run them; what git init itself writes stays.
func TestProtectedNamesCreatedDuringRun(t *testing.T) {
	testenv.Require(t, "bwrap", "git")
	home, dir := gitProject(t, false)
	mark := filepath.Join(home, "pwned")
	// The command's payload, written where the sandbox may write.
	writeScript(t, filepath.Join(dir, "payload"), hook(mark, "payload"))
	code, _, errOut := runIn(t, home, dir, `
set -e
P=$PWD/payload
git init -q && cp $P .git/hooks/pre-commit && cp $P .git/hooks/post-checkout
mkdir sub && (cd sub && git init -q && cp $P .git/hooks/pre-commit)
mkdir -p a/.vscode a/.claude/commands && echo 'echo bashrc >> `+mark+`' > a/.bashrc
echo '{"terminal.integrated.shell.linux": "/x"}' > a/.vscode/settings.json
echo x > a/.claude/commands/x.md
mkdir s2 && echo "gitdir: $PWD/evil" > s2/.git
git init -q --bare evil && git -C evil config core.fsmonitor $P
`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, gone := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", "sub/.git/hooks/pre-commit", "a/.bashrc", "a/.vscode/settings.json", "a/.claude/commands/x.md", "s2/.git", "evil/config"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s is still in the tree after the run", gone)
		}
		if !strings.Contains(errOut, strconv.Quote(filepath.Join(dir, gone))+" (") {
			t.Errorf("stderr does not name %s:\n%s", gone, errOut)
		}
	}
	// git init's own files stay: the new repositories work on the host.
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		out := hostGit(t, d, "commit", "-q", "--allow-empty", "-m", "host")
		if out != "" {
			t.Errorf("host git commit in %s: %s", d, out)
		}
	}
	hostGit(t, filepath.Join(dir, "s2"), "status")
	hostGit(t, filepath.Join(dir, "evil"), "status")
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("a name planted in the sandbox ran on the host: %s", b)
	}
}

// TestGitPointers: the files that point git at another configuration or
// run programs are protected in an existing repository: git on the host,
// after the run, runs nothing the command planted.
func TestGitPointers(t *testing.T) {
	testenv.Require(t, "bwrap", "git")
	home, dir := gitProject(t, true)
	mark := filepath.Join(home, "pwned")
	git := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = d, gitEnv(home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// A linked working tree outside the project, a submodule, hooks in
	// the working tree (core.hooksPath), per-worktree configuration.
	git(dir, "worktree", "add", "-q", filepath.Join(home, "wt"))
	lib := filepath.Join(home, "lib")
	testenv.Mkdir(t, lib, 0o755)
	git(lib, "init", "-q")
	git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
	git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub")
	git(dir, "commit", "-qm", "sub")
	git(dir, "config", "core.hooksPath", ".husky")
	git(dir, "config", "extensions.worktreeConfig", "true")
	testenv.Mkdir(t, filepath.Join(dir, ".husky"), 0o755)
	writeScript(t, filepath.Join(dir, "payload"), hook(mark, "payload"))
	testenv.WriteFile(t, filepath.Join(dir, "evil.config"), []byte("[core]\n\tfsmonitor = "+filepath.Join(dir, "payload")+"\n"), 0o644)

	attacks := []struct{ name, script string }{
		{"commondir", `git init -q --bare evil && cp evil.config evil/config && echo "$PWD/evil" > .git/commondir`},
		{"config.worktree", `cp evil.config .git/config.worktree`},
		{"worktrees/commondir", `git init -q --bare evil2 && cp evil.config evil2/config && echo "$PWD/evil2" > .git/worktrees/wt/commondir`},
		{"worktrees/config.worktree", `cp evil.config .git/worktrees/wt/config.worktree`},
		{"modules/config", `cat evil.config >> .git/modules/sub/config`},
		{"modules/hooks", `cp payload .git/modules/sub/hooks/post-checkout`},
		{"hooksPath", `cp payload .husky/pre-commit`},
	}
	for _, a := range attacks {
		start := time.Now()
		code, out, errOut := runIn(t, home, dir, a.script)
		t.Logf("%s: exit %d %s %s (%v)", a.name, code, out, errOut, time.Since(start))
	}
	// The user's next git commands on the host, where each planted name
	// would run.
	hostGit(t, dir, "status")
	hostGit(t, dir, "commit", "-q", "--allow-empty", "-m", "host")
	hostGit(t, filepath.Join(dir, "sub"), "status")
	hostGit(t, filepath.Join(dir, "sub"), "checkout", "-q", "HEAD")
	hostGit(t, filepath.Join(home, "wt"), "status")
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("a name planted in the sandbox ran on the host: %s", b)
	}
	for _, p := range []string{".git/commondir", ".git/config.worktree", ".git/worktrees/wt/config.worktree", ".git/modules/sub/hooks/post-checkout", ".husky/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is in the tree after the run", p)
		}
	}
}
