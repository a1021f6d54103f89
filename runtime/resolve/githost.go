package resolve

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// collectGitHost protects git's files outside the repository (Host.GitHost)
// that a write root covers, whether the plan has its @git-host-files step
// or not, unless the file-system policy is disabled: each that exists is
// bound read-only (its directories pinned), and each, existing or not, is
// watched (Result.GitWatch), with every symbolic link on the way to it:
// the check after the run moves one that is new or changed.
func (r *resolver) collectGitHost(steps []bwrap.Step) error {
	if r.rootBound {
		return nil
	}
	r.cur = 0
	for _, s := range steps {
		if s.Directive == bwrap.GitHost {
			r.cur = s.Line
		}
	}
	for _, p := range r.h.GitHost {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("resolve: git's file %q is not an absolute path", p)
		}
		real, links := r.realpath(filepath.Clean(p))
		for _, l := range links {
			if r.reaches(l) {
				r.watchGit(l)
			}
		}
		if !r.reaches(real) {
			continue
		}
		fi, err := r.lstat(real)
		if err == nil && fi.IsDir() {
			// Git cannot read a directory as a file; bound read-only, the
			// command cannot put one there.
			if err := r.addDenyWrite(real); err != nil {
				return err
			}
			continue
		}
		if err == nil {
			if err := r.addDenyWrite(real); err != nil {
				return err
			}
		}
		r.watchGit(real)
	}
	return nil
}

// watchGit adds p (a path whose directory is real) to Result.GitWatch.
func (r *resolver) watchGit(p string) {
	if !slices.Contains(r.res.GitWatch, p) {
		r.res.GitWatch = append(r.res.GitWatch, p)
		r.mark('g', p)
	}
}

// reaches reports whether the command could change p on the host: p, or
// its deepest existing ancestor, lies in a write root that outlives the
// run (not in the run's own TMPDIR, not in the sandbox's own /dev).
func (r *resolver) reaches(p string) bool {
	e := p
	for {
		if _, err := r.lstat(e); err == nil {
			break
		}
		parent := filepath.Dir(e)
		if parent == e {
			return false
		}
		e = parent
	}
	if r.tmp != nil && within(e, r.tmp.dest) || within(e, "/dev") {
		return false
	}
	return r.writable(e)
}

// checkGitHost refuses a @git-host-files step that names a file this
// runtime does not know (a plan from a newer srtc). Whatever the step
// says, every file this runtime knows is protected (collectGitHost).
func checkGitHost(operand string) error {
	for _, f := range strings.Fields(operand) {
		k, v, _ := strings.Cut(f, "=")
		var known []string
		switch k {
		case "config":
			known = policy.GitHostConfig
		case "gitk":
			known = policy.GitkStartup
		default:
			return fmt.Errorf("@%s: unknown parameter %q (a plan from a newer srtc?)", bwrap.GitHost, f)
		}
		for _, s := range strings.Split(v, ",") {
			if s != "" && !slices.Contains(known, s) {
				return fmt.Errorf("@%s: unknown file %q (a plan from a newer srtc?)", bwrap.GitHost, s)
			}
		}
	}
	return nil
}
