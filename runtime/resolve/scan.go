package resolve

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/gitconfig"
)

// maxScanEntries bounds the mandatory-deny scan; a working directory with
// more entries within the search depth is refused rather than half scanned.
const maxScanEntries = 2_000_000

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
	g := gitNames{dirs: gitDirs, files: gitFiles, home: r.h.Home, global: gitconfig.GlobalHooksPaths(r.h.Home, os.Getenv)}
	files := map[string]bool{}
	for _, f := range policy.MandatoryFiles {
		files[f] = true
	}
	var found []string
	entries := 0
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
		if entries++; entries > maxScanEntries {
			return fmt.Errorf("more than %d entries within depth %d", maxScanEntries, d)
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
	return found, nil
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
	global      []string // core.hooksPath values of the user's configuration
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
