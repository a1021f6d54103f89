//go:build linux

package quarantine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/resolve"
)

// MaxEntries bounds the walk of the write roots; a tree with more entries
// is checked up to there and the rest is reported as not checked.
const MaxEntries = 2_000_000

// Check returns the protected names below spec.Roots written during the
// run. Notes say what could not be checked.
func Check(spec Spec) (found []Finding, notes []string) {
	c := &checker{spec: spec, files: map[string]bool{}, seen: map[string]bool{}}
	for _, f := range policy.MandatoryFiles {
		c.files[f] = true
	}
	c.globalHooks = resolve.GlobalHooksPaths(spec.Home)
	for _, r := range spec.Roots {
		if r == "/dev" || strings.HasPrefix(r, "/dev/") {
			continue
		}
		if fi, err := os.Lstat(r); err != nil || !fi.IsDir() {
			c.file(r, "a protected name")
			continue
		}
		c.dir(r)
		if c.entries > MaxEntries {
			c.notes = append(c.notes, fmt.Sprintf("stopped after %d entries below %s: protected names further on were not checked", MaxEntries, r))
			break
		}
	}
	return c.found, c.notes
}

type checker struct {
	spec        Spec
	files       map[string]bool
	globalHooks []string
	entries     int
	found       []Finding
	notes       []string
	seen        map[string]bool
}

func (c *checker) add(p, why string) {
	if !c.seen[p] {
		c.seen[p] = true
		c.found = append(c.found, Finding{p, why})
	}
}

// changed reports whether p (not followed) changed during the run and
// can do harm: not a directory, not an empty file.
func (c *checker) changed(p string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return false
	}
	if st.Ctim.Nano() < c.spec.Since {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return false
	case unix.S_IFREG:
		return st.Size > 0
	}
	return true // a symlink, a device, a fifo: nothing the run should leave there
}

func (c *checker) file(p, why string) {
	if c.changed(p) {
		c.add(p, why)
	}
}

// tree checks everything below a protected directory; skip leaves names
// out (hook samples, which git never runs).
func (c *checker) tree(d, why string, skip func(string) bool) {
	if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
		c.file(d, why) // a symlink or file in place of the directory
		return
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		c.notes = append(c.notes, fmt.Sprintf("%s: cannot be read (%v), not checked", d, err))
		return
	}
	for _, e := range entries {
		p := filepath.Join(d, e.Name())
		c.entries++
		switch {
		case skip != nil && skip(e.Name()):
		case e.IsDir():
			c.tree(p, why, skip)
		default:
			c.file(p, why)
		}
	}
}

// dir walks a directory of a write root.
func (c *checker) dir(d string) {
	if c.entries > MaxEntries {
		return
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			c.notes = append(c.notes, fmt.Sprintf("%s: cannot be read (%v), not checked", d, err))
		}
		return
	}
	has := map[string]os.DirEntry{}
	for _, e := range entries {
		has[e.Name()] = e
	}
	if bare(has) && filepath.Base(d) != ".git" {
		// git takes a directory with HEAD, objects and refs for a
		// repository of its own when run there.
		c.gitDir(d, "")
	}
	for _, e := range entries {
		c.entries++
		name, p := e.Name(), filepath.Join(d, e.Name())
		switch {
		case name == ".git":
			if e.IsDir() {
				c.gitDir(p, d)
			} else {
				c.file(p, "a .git file or link, which points git at another repository")
			}
			continue
		case c.files[name]:
			c.file(p, "a protected file")
		case name == ".vscode" || name == ".idea":
			c.tree(p, "editor settings", nil)
			continue
		case name == ".claude" && e.IsDir():
			c.tree(filepath.Join(p, "commands"), "agent commands", nil)
			c.tree(filepath.Join(p, "agents"), "agent definitions", nil)
		}
		if e.IsDir() {
			c.dir(p)
		}
	}
}

func bare(has map[string]os.DirEntry) bool {
	h, o, r := has["HEAD"], has["objects"], has["refs"]
	return h != nil && !h.IsDir() && o != nil && o.IsDir() && r != nil && r.IsDir()
}

func sample(name string) bool { return strings.HasSuffix(name, ".sample") }

// gitDir checks a git directory: hooks, the files that redirect git to
// another configuration, the configuration itself, linked working trees
// and submodules.
func (c *checker) gitDir(g, worktree string) {
	c.tree(filepath.Join(g, "hooks"), "a git hook", sample)
	c.file(filepath.Join(g, "commondir"), "git's commondir, which moves the configuration and hooks elsewhere")
	c.config(filepath.Join(g, "config"))
	c.config(filepath.Join(g, "config.worktree"))
	if wts, err := os.ReadDir(filepath.Join(g, "worktrees")); err == nil {
		for _, w := range wts {
			wd := filepath.Join(g, "worktrees", w.Name())
			c.file(filepath.Join(wd, "commondir"), "a linked working tree's commondir")
			c.config(filepath.Join(wd, "config.worktree"))
		}
	}
	hooks := append([]string{}, c.globalHooks...)
	for _, n := range []string{"config", "config.worktree"} {
		if b, err := os.ReadFile(filepath.Join(g, n)); err == nil {
			hooks = append(hooks, resolve.HooksPaths(b)...)
		}
	}
	for _, h := range hooks {
		if !filepath.IsAbs(h) {
			if worktree == "" {
				continue
			}
			h = filepath.Join(worktree, h)
		}
		if c.inRoots(h) {
			c.tree(h, "a git hook (core.hooksPath)", sample)
		}
	}
	modules := filepath.Join(g, "modules")
	c.modules(modules, 0)
}

// modules checks the submodules' git directories below dir (a name may
// have slashes: each git directory holds HEAD).
func (c *checker) modules(dir string, level int) {
	entries, err := os.ReadDir(dir)
	if err != nil || level > 8 {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil && !fi.IsDir() {
			c.gitDir(p, "")
			continue
		}
		c.modules(p, level+1)
	}
}

// config quarantines a git configuration written during the run, unless
// allowGitConfig lets the command write it, or it sets only what git init,
// clone and remote add write (a fresh repository stays usable).
func (c *checker) config(p string) {
	if !c.spec.GitConfig || !c.changed(p) {
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		c.add(p, "a git configuration that cannot be read")
		return
	}
	entries, ok := resolve.ParseGitConfig(b)
	if !ok {
		c.add(p, "a git configuration that cannot be read with certainty")
		return
	}
	for _, e := range entries {
		if !safeKey(e.Key) {
			c.add(p, "a git configuration that sets "+e.Key)
			return
		}
	}
}

// safeKey reports whether a git variable is one that runs nothing and
// redirects nothing.
func safeKey(k string) bool {
	switch k {
	case "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
		"core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf",
		"extensions.objectformat", "user.name", "user.email":
		return true
	}
	section, _, _ := strings.Cut(k, ".")
	name := k[strings.LastIndexByte(k, '.')+1:]
	switch section {
	case "remote":
		return name == "url" || name == "fetch" || name == "pushurl"
	case "branch":
		return name == "remote" || name == "merge"
	case "submodule":
		return name == "url" || name == "active"
	}
	return false
}

func (c *checker) inRoots(p string) bool {
	for _, r := range c.spec.Roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}
