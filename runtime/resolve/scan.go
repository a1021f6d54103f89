package resolve

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
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
		}
	}
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
				found = append(found, filepath.Join(p, "hooks"))
				if gitConfig {
					found = append(found, filepath.Join(p, "config"))
				}
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
