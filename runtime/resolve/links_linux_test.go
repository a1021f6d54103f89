//go:build linux

package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
)

const linksNetwork = `"network": {"allowedDomains": [], "deniedDomains": []}`

// TestWriteRootThroughLink: a write root reached through a symbolic link
// anywhere below the home or working directory, or anywhere on an
// absolute path, is refused, naming the setting and the link; the home
// and working directories themselves may be reached through the host's
// links; a default root through a link is left out with a warning.
func TestWriteRootThroughLink(t *testing.T) {
	refused := []struct {
		name, allowWrite, setup, link string
	}{
		// The command made node_modules a link to the home: a later
		// run's node_modules/.cache would bind ~/.cache.
		{"a parent is a link", `"./node_modules/.cache"`, "node_modules", "/proj/node_modules"},
		{"the root is a link", `"./other-link"`, "", "/proj/other-link"},
		{"an absolute path through a link", `"ABS/via/.cache"`, "via", "/via"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			home, cwd := project(t)
			testenv.MkdirAll(t, filepath.Join(home, ".cache"), 0o755)
			switch c.setup {
			case "node_modules":
				if err := os.Symlink(home, filepath.Join(cwd, "node_modules")); err != nil {
					t.Fatal(err)
				}
			case "via":
				if err := os.Symlink(home, filepath.Join(filepath.Dir(home), "via")); err != nil {
					t.Fatal(err)
				}
			}
			aw := strings.ReplaceAll(c.allowWrite, "ABS", filepath.Dir(home))
			_, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": [".", `+aw+`], "denyWrite": []}}`),
				Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3})
			if err == nil {
				t.Fatal("Resolve bound a write root reached through a link")
			}
			msg := err.Error()
			link := filepath.Dir(home) + strings.TrimPrefix(c.link, "/proj")
			if strings.HasPrefix(c.link, "/proj") {
				link = cwd + strings.TrimPrefix(c.link, "/proj")
			}
			for _, want := range []string{"filesystem.allowWrite[1] s.json:", link, "symbolic link", "remove the link"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
		})
	}

	t.Run("the home reached through a host link", func(t *testing.T) {
		home, cwd := project(t)
		alias := filepath.Join(t.TempDir(), "alias")
		if err := os.Symlink(filepath.Dir(home), alias); err != nil {
			t.Fatal(err)
		}
		aliasHome := filepath.Join(alias, filepath.Base(home))
		res, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": [".", "~/other"], "denyWrite": []}}`),
			Host{Home: aliasHome, Cwd: filepath.Join(aliasHome, "proj"), TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3})
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(res.Args, " ")
		for _, want := range []string{"--bind " + cwd + " " + cwd, "--bind " + home + "/other " + home + "/other"} {
			if !strings.Contains(args, want) {
				t.Errorf("args lack %q:\n%s", want, strings.Join(res.Args, "\n"))
			}
		}
	})

	t.Run("a default root through a link", func(t *testing.T) {
		home, cwd := project(t)
		if err := os.Symlink(filepath.Join(home, "other"), filepath.Join(home, ".npm")); err != nil {
			t.Fatal(err)
		}
		testenv.MkdirAll(t, filepath.Join(home, "other/_logs"), 0o755)
		res, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`),
			Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3})
		if err != nil {
			t.Fatal(err)
		}
		if args := strings.Join(res.Args, " "); strings.Contains(args, "_logs") {
			t.Errorf("~/.npm/_logs, through a link, is bound:\n%s", strings.Join(res.Args, "\n"))
		}
		if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, home+"/.npm") || !strings.Contains(w, "symbolic link") {
			t.Errorf("warnings = %q, want one naming %s/.npm", w, home)
		}
	})

	t.Run("bound from the descriptor opened", func(t *testing.T) {
		home, cwd := project(t)
		res, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": [".", "~/other"], "denyWrite": []}}`),
			Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, BindFD: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		args := strings.Join(res.Args, " ")
		for i, dir := range []string{cwd, home + "/other"} {
			want := "--bind /proc/self/fd/" + string(rune('7'+i)) + " " + dir
			if !strings.Contains(args, want) {
				t.Errorf("args lack %q:\n%s", want, strings.Join(res.Args, "\n"))
			}
			var st, want2 unix.Stat_t
			if len(res.BindFiles) <= i || unix.Fstat(int(res.BindFiles[i].Fd()), &st) != nil || unix.Stat(dir, &want2) != nil || st.Ino != want2.Ino {
				t.Errorf("BindFiles[%d] is not %s", i, dir)
			}
		}
	})
}

// TestWriteRootSwappedForLink: a write root swapped for a link after srt
// looked at it (another sandbox of the same project, racing) is bound as
// the directory srt opened: what the command writes there lands in that
// directory, not where the link leads. As the caller and as nobody.
func TestWriteRootSwappedForLink(t *testing.T) {
	bw := testenv.Require(t, "bwrap")[0]
	for _, uid := range users() {
		home, cwd := liveProject(t, uid)
		work := filepath.Join(cwd, "work")
		testenv.Mkdir(t, work, 0o755)
		testenv.Lchown(t, work, uid, uid)
		res, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": ["./work"], "denyWrite": []}}`),
			Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, BindFD: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(work, work+".was"); err != nil {
			t.Fatal(err)
		}
		// A relative link: bubblewrap mounts where it leads inside the new
		// root (an absolute one leads nowhere there, and bubblewrap does
		// not start).
		if err := os.Symlink("../other", work); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, res.Args...), "--", "/bin/sh", "-c", "echo x > "+work+"/f")
		testenv.RunBwrap(t, bw, args, liveSeccomp(t), uid, res.BindFiles...)
		res.Close()
		if _, err := os.Stat(filepath.Join(home, "other/f")); err == nil {
			t.Errorf("uid %d: the write went where the link leads", uid)
		}
		if _, err := os.Stat(work + ".was/f"); err != nil {
			t.Errorf("uid %d: the write is not in the directory srt opened: %v", uid, err)
		}
	}
}

// TestTooManyProtectedNames: a working directory with more protected
// names within the scan's depth than bubblewrap takes binds (what a run
// that planted a .bashrc in every directory leaves) is refused, saying
// what the scan found and what to do.
func TestTooManyProtectedNames(t *testing.T) {
	home, cwd := project(t)
	for i := range 3000 {
		d := filepath.Join(cwd, "many", "d"+strconv.Itoa(i))
		testenv.MkdirAll(t, d, 0o755)
		testenv.WriteFile(t, filepath.Join(d, ".bashrc"), []byte("x"), 0o644)
	}
	_, err := Resolve(plan(t, `{`+linksNetwork+`, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`),
		Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3})
	if err == nil || !strings.Contains(err.Error(), "srt quarantine check") || !strings.Contains(err.Error(), "found 30") {
		t.Errorf("Resolve = %v; want a refusal that names the scan and what to do", err)
	}
}

// TestPlaceholderBelowPlaceholder: a placeholder below another (what a
// run decides when another run's bubblewrap makes .claude between its two
// looks at the tree) is dropped: the one above covers it, and bubblewrap
// could not make its mount point inside an empty read-only directory.
func TestPlaceholderBelowPlaceholder(t *testing.T) {
	r := &resolver{res: &Result{Placeholders: []string{"/p/.claude", "/p/.claude/agents", "/p/.bashrc"}}}
	got := r.coveredPlaceholders([]mount{{"/e", "/p/.claude"}, {"/e", "/p/.claude/agents"}, {"/e", "/p/.bashrc"}, {"/p/.git/hooks", "/p/.git/hooks"}})
	want := []mount{{"/e", "/p/.claude"}, {"/e", "/p/.bashrc"}, {"/p/.git/hooks", "/p/.git/hooks"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mounts = %v, want %v", got, want)
	}
	if fmt.Sprint(r.res.Placeholders) != fmt.Sprint([]string{"/p/.claude", "/p/.bashrc"}) {
		t.Errorf("placeholders = %v", r.res.Placeholders)
	}
}
