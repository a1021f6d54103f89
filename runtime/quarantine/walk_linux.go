//go:build linux

package quarantine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/gitconfig"
	"srt.dev/runtime/nofollow"
	"srt.dev/runtime/realpath"
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

// kernelFS reports whether the directory fd is on one of the kernel's own
// file systems (proc, sysfs, cgroups, debugfs, …), where no file can be
// made: no protected name can be planted there.
func kernelFS(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC,
		unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC, unix.BPF_FS_MAGIC,
		unix.PSTOREFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.SELINUX_MAGIC,
		unix.SMACK_MAGIC, unix.EFIVARFS_MAGIC, unix.BINFMTFS_MAGIC, unix.FUTEXFS_SUPER_MAGIC,
		0x19800202, 0x62656570: // mqueue, configfs
		return true
	}
	return false
}

// Snap records the write roots of spec before the command starts: what
// the check after the run compares with. cache is an earlier snapshot of
// the same roots (nil for none): directories unchanged since it are not
// read again. unrecorded says what could not be recorded, and so could
// not be checked after the run: the command must then not start.
func Snap(spec Spec, cache *Snapshot, lim Limits) (s *Snapshot, unrecorded []string) {
	hooks := map[string]string{}
	var rel []string
	for _, h := range gitconfig.GlobalHooksPaths(spec.Home, os.Getenv) {
		if d := hooksDir(spec.Home, "", h); d != "" {
			hooks[d] = whyHooksPath
		} else {
			rel = append(rel, h) // a directory in every working tree
		}
	}
	w := walk(spec, cache, false, hooks, rel, lim)
	// A repository's own core.hooksPath names a directory the walk may
	// have passed already: walk again with it (what was read is reused).
	added := false
	for _, c := range w.configs {
		for _, h := range c.hooks {
			if d := hooksDir(spec.Home, c.top, h); d != "" && w.hooks[d] == "" {
				w.hooks[d], added = whyHooksPath, true
			}
		}
	}
	if added {
		// The second walk reads again what the first could not: its
		// notes are the walk's.
		w = walk(spec, w.out, false, w.hooks, rel, lim)
	}
	w.out.Hooks, w.out.RelHooks = w.hooks, rel
	return w.out, w.notes()
}

// maxNotes is the most places a walk names among those it could not
// vouch for; the rest are counted.
const maxNotes = 20

// notes are what the walk could not vouch for, in order: that it stopped
// at its limit first, then the first maxNotes places, then how many more.
func (w *walker) notes() []string {
	var out []string
	if w.stopped.Load() {
		out = append(out, fmt.Sprintf("the walk stopped at its limit (%d entries, or %v): what it did not reach is not checked", w.lim.Entries, w.lim.Time))
	}
	sort.Strings(w.unchecked)
	if len(w.unchecked) <= maxNotes {
		return append(out, w.unchecked...)
	}
	out = append(out, w.unchecked[:maxNotes]...)
	return append(out, fmt.Sprintf("and %d more places", len(w.unchecked)-maxNotes))
}

const whyHooksPath = "a git hook (core.hooksPath)"

func walk(spec Spec, ref *Snapshot, end bool, hooks map[string]string, rel []string, lim Limits) *walker {
	w := newWalker(spec, ref, end, lim)
	w.hooks = maps.Clone(hooks)
	if w.hooks == nil {
		w.hooks = map[string]string{}
	}
	w.relHooks = rel
	for _, r := range spec.Roots {
		w.root(filepath.Clean(r))
	}
	w.watch()
	return w
}

// watch records the watched paths (Spec.Watch, Spec.GitWatch); after the
// run, one that exists and is new or changed is found, and so is a link
// put on the way to one of git's files.
func (w *walker) watch() {
	w.out.Watched = map[string]*leaf{}
	for _, p := range w.spec.Watch {
		w.watchPath(p, whyWatched, false)
	}
	for _, p := range w.spec.GitWatch {
		why := whyGitHost
		if b := filepath.Base(p); b == "gitk" || b == ".gitk" {
			why = whyGitk
		}
		w.watchPath(p, why, true)
	}
}

const (
	whyWatched    = "srt's own file (such as a settings file) created or changed during the run: it would change a later run's rules"
	whyGitHost    = "git's configuration outside the repository, which the user's next git command reads in any repository"
	whyGitk       = "gitk's start-up file, which gitk runs as a program"
	whyGitHostWay = "a link on the way to git's configuration outside the repository, which changes what the user's next git command reads"
)

// watchPath records the watched path p (see watch). git is set for one of
// git's files, whose directory was real when the run started: a link on
// the way to it now, in a write root, is found; a directory gone or
// replaced by a file, and a directory or an empty file at p, leave git
// nothing to read.
func (w *walker) watchPath(p, why string, git bool) {
	dir, name := filepath.Dir(p), filepath.Base(p)
	fd, err := openRoot(dir)
	if err != nil {
		// (A link in place of the directory itself is ENOTDIR.)
		le := nofollow.FirstLink(dir)
		switch {
		case git && le != nil && w.end && w.inRoots(le.Link):
			w.linkOnTheWay(le.Link)
		case le == nil && (errors.Is(err, unix.ENOENT) || git && errors.Is(err, unix.ENOTDIR)):
			// Its directory is not there.
		case le != nil:
			w.note("%v", le)
		default:
			w.note("%q: %v", p, err)
		}
		return
	}
	defer unix.Close(fd)
	id, err := lstatAt(fd, name)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			w.note("%q: %v", p, err)
		}
		return
	}
	if git && (id.isDir() || id.isReg() && id.Size == 0) {
		// Git reads nothing from either (and stops on a directory): a
		// placeholder of the mandatory denies looks like one.
		return
	}
	var was *leaf
	if w.ref != nil {
		was = w.ref.Watched[p]
	}
	rs := &rootSnap{Path: dir}
	l := w.leaf(fd, name, id, was, nil, rs, false)
	w.out.Watched[p] = l
	if w.end && (was == nil || !was.id.unchanged(id) || l.link != was.link || id.isReg() && (!l.hashed || !was.hashed || l.sum != was.sum)) {
		w.found = append(w.found, Finding{Root: dir, Rel: name, id: id, Why: why})
	}
}

// inRoots reports whether p lies below one of the write roots.
func (w *walker) inRoots(p string) bool {
	for _, r := range w.spec.Roots {
		if r = filepath.Clean(r); p != r && strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// linkOnTheWay finds the link at p, which the run put on the way to one of
// git's files (its directory has no link: p is the first on the way).
func (w *walker) linkOnTheWay(p string) {
	fd, err := openRoot(filepath.Dir(p))
	if err != nil {
		w.note("%q: %v", p, err)
		return
	}
	defer unix.Close(fd)
	id, err := lstatAt(fd, filepath.Base(p))
	if err != nil {
		w.note("%q: %v", p, err)
		return
	}
	w.found = append(w.found, Finding{Root: filepath.Dir(p), Rel: filepath.Base(p), id: id, Why: whyGitHostWay})
}

// A Report is what the check after a run found.
type Report struct {
	// Found are the protected names new or changed since the start that
	// can do harm, in the order of their paths.
	Found []Finding
	// End is what the walk saw: the next run's cache (see Snap).
	End *Snapshot
	// Unchecked says what the walk could not vouch for; empty when it
	// checked everything. A check with anything here is incomplete: a
	// name planted there may still be in the tree.
	Unchecked []string
}

// Check walks the write roots after the run, compares them with start
// (what Snap recorded) and reports the protected names that are new or
// changed and can do harm.
func Check(spec Spec, start *Snapshot, lim Limits) Report {
	w := walk(spec, start, true, start.Hooks, start.RelHooks, lim)
	w.out.Hooks, w.out.RelHooks = w.hooks, start.RelHooks
	// The walk's goroutines find in any order: the report has one, and
	// names each path once (a protected name that is also watched, or a
	// link on the way to two of git's files).
	sort.SliceStable(w.found, func(i, j int) bool { return w.found[i].Path() < w.found[j].Path() })
	var found []Finding
	for _, f := range w.found {
		if len(found) == 0 || f.Path() != found[len(found)-1].Path() {
			found = append(found, f)
		}
	}
	return Report{Found: found, End: w.out, Unchecked: w.notes()}
}

// hooksDir is the real path of the directory a core.hooksPath value h
// names (gitconfig.HooksDir; "" for a relative value without a top).
// Links are resolved as the host has them now; the part that does not
// exist yet is kept as written.
func hooksDir(home, top, h string) string {
	d := gitconfig.HooksDir(home, top, h)
	if d == "" {
		return ""
	}
	return realpath.Of(d)
}

// An Outcome is a check after a run with what it moved.
type Outcome struct {
	// Items are the protected names moved to the store.
	Items []Item
	// End is what the walk saw (see Report.End).
	End *Snapshot
	// Unchecked says what the check cannot vouch for: what the walk could
	// not check, and the names it found but did not move (the move's
	// deadline came, or the move failed). Empty when the tree is checked.
	Unchecked []string
}

// Complete reports whether the check vouches for the whole tree.
func (o Outcome) Complete() bool { return len(o.Unchecked) == 0 }

// maxLeftNamed is the most names an Outcome names among those not moved.
const maxLeftNamed = 10

// CheckAndMove checks the write roots of spec against start (Check, within
// lim) and moves what it finds to store until deadline (zero: none).
func CheckAndMove(spec Spec, start *Snapshot, store *Store, lim Limits, deadline time.Time) Outcome {
	rep := Check(spec, start, lim)
	out := Outcome{End: rep.End, Unchecked: rep.Unchecked}
	if len(rep.Found) == 0 {
		return out
	}
	items, left, err := store.Move(rep.Found, deadline)
	out.Items = items
	if len(left) > 0 {
		names := make([]string, 0, maxLeftNamed)
		for _, f := range left[:min(len(left), maxLeftNamed)] {
			names = append(names, strconv.Quote(f.Path()))
		}
		more := ""
		if len(left) > maxLeftNamed {
			more = fmt.Sprintf(" and %d more", len(left)-maxLeftNamed)
		}
		out.Unchecked = append(out.Unchecked, fmt.Sprintf("%d protected names found but not moved before the deadline: %s%s", len(left), strings.Join(names, ", "), more))
	}
	if err != nil {
		msg := err.Error()
		if len(msg) > 1000 {
			msg = strings.ToValidUTF8(msg[:1000], "") + " …"
		}
		out.Unchecked = append(out.Unchecked, "names found but not moved: "+msg)
	}
	return out
}
