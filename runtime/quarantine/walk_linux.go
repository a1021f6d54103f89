//go:build linux

package quarantine

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/gitconfig"
)

// localFS reports whether the directory fd is on a file system that
// stamps changes with this host's clock at a granularity of at most
// granularity: there, a directory whose identity and times are unchanged
// has the same names. Elsewhere (network file systems, FUSE) every
// directory is read again and every protected file compared by content.
func localFS(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// Snap records the write roots of spec before the command starts: what
// the check after the run compares with. cache is an earlier snapshot of
// the same roots (nil for none): directories unchanged since it are not
// read again. Notes say what could not be recorded.
func Snap(spec Spec, cache *Snapshot) (*Snapshot, []string) {
	hooks := map[string]string{}
	for _, h := range globalHooksDirs(spec.Home) {
		hooks[h] = whyHooksPath
	}
	w := walk(spec, cache, false, hooks)
	// A repository's own core.hooksPath names a directory the walk may
	// have passed already: walk again with it (what was read is reused).
	added := false
	for _, c := range w.configs {
		for _, h := range c.hooks {
			if d := hooksDir(spec.Home, c.top, h); d != "" && hooks[d] == "" {
				hooks[d], added = whyHooksPath, true
			}
		}
	}
	sort.Strings(w.notes)
	if added {
		notes := w.notes
		w = walk(spec, w.out, false, hooks)
		w.notes = append(notes, w.notes...)
	}
	w.out.Hooks = hooks
	return w.out, w.notes
}

const whyHooksPath = "a git hook (core.hooksPath)"

func walk(spec Spec, ref *Snapshot, end bool, hooks map[string]string) *walker {
	w := newWalker(spec, ref, end)
	w.hooks = hooks
	for _, r := range spec.Roots {
		w.root(filepath.Clean(r))
	}
	w.watch()
	return w
}

// watch records the watched paths; after the run, one that exists and is
// new or changed is found.
func (w *walker) watch() {
	w.out.Watched = map[string]*leaf{}
	for _, p := range w.spec.Watch {
		dir, name := filepath.Dir(p), filepath.Base(p)
		fd, err := openRoot(dir)
		if err != nil {
			continue // its directory is not there, or not reached without a link
		}
		id, err := lstatAt(fd, name)
		if err == nil {
			var was *leaf
			if w.ref != nil {
				was = w.ref.Watched[p]
			}
			rs := &rootSnap{Path: dir}
			l := w.leaf(fd, name, id, was, nil, rs, false)
			w.out.Watched[p] = l
			if w.end && (was == nil || !was.id.unchanged(id) || l.link != was.link || id.isReg() && (!l.hashed || !was.hashed || l.sum != was.sum)) {
				w.found = append(w.found, Finding{Root: dir, Rel: name, id: id, Why: "srt's own file (such as a settings file) created or changed during the run: it would change a later run's rules"})
			}
		}
		unix.Close(fd)
	}
}

// Check walks the write roots after the run and returns the protected
// names that are new or changed since start (what Snap recorded) and can
// do harm, and what it saw (a cache for the next Snap). Notes say what
// could not be checked.
func Check(spec Spec, start *Snapshot) (found []Finding, end *Snapshot, notes []string) {
	w := walk(spec, start, true, start.Hooks)
	w.out.Hooks = start.Hooks
	// The walk's goroutines find in any order: the report has one.
	sort.Slice(w.found, func(i, j int) bool { return w.found[i].Path() < w.found[j].Path() })
	sort.Strings(w.notes)
	return w.found, w.out, w.notes
}

// globalHooksDirs are the directories core.hooksPath names in the
// user's and the system's git configuration, resolved on this host.
func globalHooksDirs(home string) []string {
	if home == "" {
		return nil
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	var out []string
	for _, f := range []string{"/etc/gitconfig", filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")} {
		b, err := gitconfig.ReadFile(f)
		if err != nil {
			continue
		}
		for _, h := range gitconfig.HooksPaths(b) {
			if d := hooksDir(home, "", h); d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// hooksDir is the real path of the directory a core.hooksPath value h
// names: "~/" is the home, a relative path starts at top (the top of the
// working tree; "" when there is none). Links are resolved as the host
// has them now, before the command runs; the part that does not exist
// yet is kept as written.
func hooksDir(home, top, h string) string {
	if rest, ok := strings.CutPrefix(h, "~/"); ok {
		h = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(h) {
		if top == "" {
			return ""
		}
		h = top + "/" + h
	}
	return resolveMissing(h)
}

// resolveMissing resolves the deepest existing ancestor of p through
// links, as the kernel would ("a/link/../b" is resolved at the link,
// never folded as text), and joins the rest as written.
func resolveMissing(p string) string {
	parts := strings.Split(p, "/")
	for i := len(parts); i > 0; i-- {
		head := strings.Join(parts[:i], "/")
		if head == "" {
			head = "/"
		}
		real, err := filepath.EvalSymlinks(head)
		if err != nil {
			continue
		}
		return filepath.Join(append([]string{real}, parts[i:]...)...)
	}
	return filepath.Clean(p)
}
