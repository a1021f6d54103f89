package resolve

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/internal/untrusted"
	"srt.dev/runtime/gitconfig"
	"srt.dev/runtime/realpath"
)

// maxScanEntries bounds the mandatory-deny scan; a working directory with
// more entries within the search depth is refused rather than half scanned.
// (A variable for the tests.)
var maxScanEntries = 2_000_000

// scan finds the dangerous names below the working directory
// (docs/reference.md#mandatory-denies): with depth d, a dangerous file counts if its directory is
// at most d-1 levels below the working directory; a dangerous directory or
// a repository (.git) if its parent is at most d-2 levels below. Directly in
// the working directory, .git/hooks and (unless allowed) .git/config are
// protected, or a .git file itself. node_modules is not searched; symlinks
// are not followed; a directory that cannot be read is protected whole.
func (r *resolver) scan(params string) ([]string, error) {
	d, gitConfig := 3, true
	var gitDirs, gitFiles []string
	for _, f := range strings.Fields(params) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "depth":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10 {
				return nil, fmt.Errorf("@mandatory-scan: bad depth %q", v)
			}
			d = n
		case "git":
			gitConfig = v != "allow-config"
		case "git-dirs":
			gitDirs = names(v)
		case "git-files":
			gitFiles = names(v)
		default:
			return nil, fmt.Errorf("@mandatory-scan: unknown parameter %q (a plan from a newer srtc?)", f)
		}
	}
	if gitDirs == nil && gitFiles == nil {
		// A plan from before git-dirs and git-files: today's names.
		gitDirs, gitFiles = policy.GitDirs, policy.GitFiles
		if gitConfig {
			gitFiles = append(append([]string{}, gitFiles...), policy.GitConfigFiles...)
		}
	}
	g := gitNames{dirs: gitDirs, files: gitFiles, home: r.h.Home, global: gitconfig.GlobalHooksPaths(r.h.Home, os.Getenv), included: new([]string)}
	files := map[string]bool{}
	for _, f := range policy.MandatoryFiles {
		files[f] = true
	}
	var found []string
	entries := 0
	var cur, most dirCount // below a directory of root: this one, the largest before it
	direct := 0            // entries directly in root
	root := r.h.Cwd
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		level := 0
		if rel != "." {
			level = strings.Count(rel, string(filepath.Separator)) + 1
		}
		if err != nil {
			if e != nil && e.IsDir() && p != root {
				found = append(found, p) // unreadable: protect it whole
				return fs.SkipDir
			}
			return nil
		}
		if level == 1 {
			direct++
		} else if level > 1 {
			// WalkDir is depth first: the entries below one directory
			// of root come one after the other.
			if top, _, _ := strings.Cut(rel, string(filepath.Separator)); top == cur.name {
				cur.n++
			} else {
				most = larger(most, cur)
				cur = dirCount{top, 1}
			}
		}
		if entries++; entries > maxScanEntries {
			return tooManyEntries(root, d, direct, larger(most, cur))
		}
		name := e.Name()
		if !e.IsDir() {
			// p is a file at level; its directory is at level-1.
			if files[name] && level-1 <= d-1 && level > 1 {
				found = append(found, p)
			}
			if name == ".git" && level-1 <= d-2 {
				found = append(found, p) // a worktree or submodule pointer
			}
			return nil
		}
		if p == root {
			return nil
		}
		parent := level - 1
		switch {
		case name == "node_modules":
			return fs.SkipDir
		case name == ".git":
			if parent <= d-2 {
				found = append(found, g.protect(p, filepath.Dir(p), 0)...)
			}
			return fs.SkipDir
		case name == ".vscode" || name == ".idea":
			if parent <= d-2 && level > 1 {
				found = append(found, p)
			}
		case name == ".claude":
			if parent <= d-2 && level > 1 {
				found = append(found, filepath.Join(p, "commands"), filepath.Join(p, "agents"))
			}
		}
		if level >= d {
			return fs.SkipDir // nothing deeper can count
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("@mandatory-scan of %s: %w", root, err)
	}
	if !r.rootBound {
		for _, f := range *g.included {
			real, links := realpath.Resolve(f)
			for _, l := range links {
				if r.reaches(l) {
					r.watchGit(l)
				}
			}
			if r.reaches(real) {
				r.watchGit(real)
			}
		}
	}
	return found, nil
}

// A dirCount is how many entries the scan found below the directory name.
type dirCount struct {
	name string
	n    int
}

func larger(a, b dirCount) dirCount {
	if b.n > a.n {
		return b
	}
	return a
}

// tooManyEntries is the scan's refusal of a working directory root with
// more than maxScanEntries entries within depth d: it names the directory
// directly in root that holds the most (most), or root itself when more are
// directly in it (direct), and says what to do. A
// sandboxed run may have made that directory, and named it: it is shown
// through untrusted.Quote.
func tooManyEntries(root string, d, direct int, most dirCount) error {
	where := fmt.Sprintf("%d of them directly in it", direct)
	if most.n > direct {
		where = fmt.Sprintf("%d of them below %s", most.n, untrusted.Quote(filepath.Join(root, most.name)))
	}
	return fmt.Errorf("more than %d entries within depth %d (%s): srt looks there for protected names before each run, and does not start one it could not scan whole. "+
		"If a sandboxed run left them, remove them; or run srt from a directory that does not hold them; or lower mandatoryDenySearchDepth in the settings (1-10, now %d)", maxScanEntries, d, where, d)
}

func names(v string) []string {
	out := []string{}
	for _, n := range strings.Split(v, ",") {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// gitNames are the names protected in each git directory.
type gitNames struct {
	dirs, files []string
	home        string
	global      []string  // core.hooksPath values of the user's configuration
	included    *[]string // the files the repositories' configurations include
}

// maxModuleDepth bounds the submodules of submodules followed below
// .git/modules.
const maxModuleDepth = 4

// protect returns the protected names of the git directory gitDir, whose
// working tree is worktree ("" for none known): its own names, the
// directory core.hooksPath names, and the same for each submodule's git
// directory under modules/.
func (g gitNames) protect(gitDir, worktree string, level int) []string {
	var out []string
	for _, n := range g.dirs {
		out = append(out, filepath.Join(gitDir, n)) // an absent one gets an empty directory
	}
	for _, n := range g.files {
		// git reads commondir (and config.worktree, when enabled) whenever
		// the name exists, and fails on a placeholder: an absent one is
		// left to the check after the run. config keeps its placeholder.
		if _, err := os.Lstat(filepath.Join(gitDir, n)); err == nil || n == "config" {
			out = append(out, filepath.Join(gitDir, n))
		}
	}
	hooks := append([]string{}, g.global...)
	for _, n := range []string{"config", "config.worktree"} {
		if b, err := gitconfig.ReadFile(filepath.Join(gitDir, n)); err == nil {
			hooks = append(hooks, gitconfig.HooksPaths(b)...)
		}
		// What the configuration includes (a file of the working tree,
		// often) is protected as the configuration is: read-only when it
		// exists (git refuses a directory there), and watched, there or
		// not, as git's files outside the repository are.
		files, h := gitconfig.Included(g.home, filepath.Join(gitDir, n))
		hooks = append(hooks, h...)
		if slices.Contains(g.files, "config") {
			for _, f := range files {
				if _, err := os.Lstat(f); err == nil {
					out = append(out, f)
				}
			}
			*g.included = append(*g.included, files...)
		}
	}
	for _, h := range hooks {
		if d := gitconfig.HooksDir(g.home, worktree, h); d != "" {
			out = append(out, d)
		}
	}
	if level >= maxModuleDepth {
		return out
	}
	// Submodules' git directories: modules/<name>, where a name may have
	// slashes; each holds HEAD.
	modules := filepath.Join(gitDir, "modules")
	filepath.WalkDir(modules, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() || p == modules {
			return nil
		}
		if fi, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil && fi.Mode().IsRegular() {
			out = append(out, g.protect(p, "", level+1)...)
			return fs.SkipDir
		}
		return nil
	})
	return out
}
