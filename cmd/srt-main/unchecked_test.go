//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
)

// TestCheckFailsClosed: a command that makes the check after the run
// reach its limit (here lowered with SRT_CHECK_ENTRIES, as a command that
// creates millions of names would make it reach the default) does not
// get its hook past it: srt says what it could not check and exits 125;
// the next run in the tree does not start, and says what to do; srt
// quarantine check checks the tree without limits and moves the hook;
// the host's git then runs nothing, and runs start again. As the caller,
// and as nobody when the tests run as root.
func TestCheckFailsClosed(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "git", "script")
	bin := srtBin
	users := testUsers()
	for _, uid := range users {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newWorld(t, bin, uid)
			w.write("s.json", writeProject)
			gitRepo(w, w.proj)
			// A repository deeper than the scan at the start looks: only
			// the check after the run protects its hooks.
			deep := filepath.Join(w.proj, "deep/a/b/c")
			testenv.MkdirAll(t, deep, 0o755)
			w.chown()
			gitRepo(w, deep)
			for i := range 20 {
				w.write("src/f"+strconv.Itoa(i), "")
			}
			srt := func(limit string, args ...string) (int, string) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := w.command(ctx, w.bin, args...)
				if limit != "" {
					cmd.Env = append(cmd.Env, "SRT_CHECK_ENTRIES="+limit)
				}
				out, err := cmd.CombinedOutput()
				if ctx.Err() != nil {
					t.Fatalf("srt %q did not return", args)
				}
				if err != nil {
					return cmd.ProcessState.ExitCode(), string(out)
				}
				return 0, string(out)
			}
			code, out := srt("200", "--settings", "s.json", "-c", `for i in $(seq 400); do : > src/n$i; done; cp "$P" deep/a/b/c/.git/hooks/pre-commit`)
			if code != sandbox.ExitUnchecked || !strings.Contains(out, "could not vouch") || !strings.Contains(out, "srt quarantine check") {
				t.Fatalf("a check past its limit: exit %d, want %d with what to do:\n%s", code, sandbox.ExitUnchecked, out)
			}
			if r := reassuring(out); r != "" {
				t.Errorf("a check past its limit says %q:\n%s", r, out)
			}
			code, out = srt("", "--settings", "s.json", "-c", "echo ran")
			if code != sandbox.ExitUnchecked || strings.Contains(out, "ran\n") || !strings.Contains(out, "srt quarantine check") {
				t.Fatalf("a run in the unchecked tree: exit %d, want %d, not run, with what to do:\n%s", code, sandbox.ExitUnchecked, out)
			}
			if r := reassuring(out); r != "" {
				t.Errorf("a run refused in the unchecked tree says %q:\n%s", r, out)
			}
			code, out = srt("", "quarantine", "check")
			if code != 0 || !strings.Contains(out, "runs may start there again") {
				t.Fatalf("srt quarantine check: exit %d:\n%s", code, out)
			}
			// The control: what srt says once a check vouched for the
			// tree is what reassuring looks for.
			if reassuring(out) == "" {
				t.Errorf("reassuring finds nothing in what srt quarantine check says after a complete check: the assertions above do not test:\n%s", out)
			}
			if _, err := os.Lstat(filepath.Join(deep, ".git/hooks/pre-commit")); err == nil {
				t.Fatalf("srt quarantine check left the hook:\n%s", out)
			}
			w.hostGit(deep)
			if got := w.pwned(); got != "" {
				t.Errorf("the host's git ran the planted hook: %s", got)
			}
			if code, out = srt("", "--settings", "s.json", "-c", "echo ran"); code != 0 || !strings.Contains(out, "ran") {
				t.Errorf("a run after the check: exit %d:\n%s", code, out)
			}
			if code, out = srt("", "quarantine", "check"); code != 0 || !strings.Contains(out, "no tree is left unchecked") {
				t.Errorf("srt quarantine check with nothing to do: exit %d:\n%s", code, out)
			}
		})
	}
}

// TestRootParentLinkRemoved: the command moves the directory that holds a
// write root away and puts a link in its place. The check after the run
// does not follow the link: it exits 125 and names it, and the next run
// does not start. The user removes the link; srt quarantine check then
// finds the root absent (nothing there to check, and no link on the way),
// the tree checked, and runs start again. What the command planted in the
// tree it moved is found where it is now. As the caller, and as nobody
// when the tests run as root.
func TestRootParentLinkRemoved(t *testing.T) {
	requireSandbox(t)
	bin := srtBin
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newWorld(t, bin, uid)
			w.write("s.json", `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [".", "a/b"], "denyWrite": []}}`)
			w.write("a/b/f", "")
			code, _, out := w.srt("--settings", "s.json", "-c", `mv a a2 && ln -s a2 a && echo 'echo evil' > a2/b/.bashrc`)
			if code != sandbox.ExitUnchecked || !strings.Contains(out, "without following a link") {
				t.Fatalf("a link in place of a write root's parent: exit %d, want %d naming the link:\n%s", code, sandbox.ExitUnchecked, out)
			}
			// (Refused for the link before the tree is found unchecked.)
			if code, stdout, out := w.srt("--settings", "s.json", "-c", "echo ran"); code == 0 || strings.Contains(stdout, "ran") || !strings.Contains(out, "remove the link") {
				t.Fatalf("a run in the unchecked tree: exit %d, want it refused, saying what to do:\n%s%s", code, stdout, out)
			}
			// The user removes the link, as srt says.
			testenv.Remove(t, filepath.Join(w.proj, "a"))
			code, stdout, out := w.srt("quarantine", "check")
			if code != 0 || strings.Contains(stdout+out, "link") {
				t.Fatalf("srt quarantine check with the link removed: exit %d, want 0, no link named:\n%s%s", code, stdout, out)
			}
			if _, err := os.Lstat(filepath.Join(w.proj, "a2/b/.bashrc")); err == nil {
				t.Errorf("the planted a2/b/.bashrc is still there")
			}
			if code, stdout, out := w.srt("--settings", "s.json", "-c", "echo ran"); code != 0 || !strings.Contains(stdout, "ran") {
				t.Errorf("a run after srt quarantine check: exit %d:\n%s%s", code, stdout, out)
			}
		})
	}
}

// reassuringLines are what srt says when a check vouched for a tree (srt
// quarantine check), and what a check that cannot vouch must never say
// (it never prints "nothing to quarantine").
var reassuringLines = []string{"nothing to quarantine", "no tree is left unchecked", "vouched for what", "no protected name was planted", "runs may start there again", " checked: ", "all clear"}

// reassuring returns the first of reassuringLines in out, or "".
func reassuring(out string) string {
	for _, r := range reassuringLines {
		if strings.Contains(out, r) {
			return r
		}
	}
	return ""
}
