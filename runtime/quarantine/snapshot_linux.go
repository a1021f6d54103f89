//go:build linux

package quarantine

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/gitconfig"
	"srt.dev/runtime/nofollow"
)

// MaxDepth is the deepest directory a walk enters below a root: each
// level holds a descriptor while the walk is below it.
const MaxDepth = 256

// granularity is the coarsest timestamp of the file systems whose
// timestamps srt trusts to say that a directory's names did not change
// (FAT records times to 2 s). A directory or file whose change time is
// within it of a snapshot is read again rather than trusted.
const granularity = 2 * time.Second

// A Snapshot is what a walk of the write roots saw: every directory (its
// identity and, where it was read, its subdirectories) and, in each, the
// entries that matter to the protections: protected names, the entries
// that make a directory a git repository, everything inside a protected
// directory.
type Snapshot struct {
	// Taken is the host's clock when the walk started (ns).
	Taken int64
	Roots []*rootSnap
	// Hooks are the directories core.hooksPath names (real paths), with
	// why each is protected: their contents are protected as hooks.
	Hooks map[string]string
	// RelHooks are the relative core.hooksPath values of the user's and
	// the system's configuration (gitconfig.GlobalHooksPaths), read
	// before the command started: each names a directory in every working
	// tree, those made during the run too.
	RelHooks []string
	// Watched are Spec.Watch's paths as they were (nil: absent).
	Watched map[string]*leaf
}

type rootSnap struct {
	Path string
	// Dir is the root directory, nil when the root is not one (a file
	// write root is compared as an entry: File).
	Dir  *node
	File *leaf
	// Local is whether the root's file system stamps changes with this
	// host's clock, so that an unchanged change time means unchanged.
	Local bool
	// Partial is set when a limit stopped the walk: directories it did
	// not reach have no node.
	Partial bool
}

// A node is one directory.
type node struct {
	id ident
	// ctx is how the walk read it (see dirCtx).
	ctx dirCtx
	// read is set when its names were listed: dirs then holds every
	// subdirectory (but those the walk skips) and leaves every entry that
	// matters in ctx.
	read   bool
	dirs   map[string]*node
	leaves map[string]*leaf
}

// A leaf is one entry that matters (a file, a link, anything but a
// directory the walk enters).
type leaf struct {
	id ident
	// sum is the content's SHA-256 when hashed (regular files srt had to
	// compare by content); link is a link's target.
	sum    [32]byte
	hashed bool
	link   string
	// hooks are the core.hooksPath values of a git configuration.
	hooks []string
}

// dirCtx is what a directory is to the protections.
type dirCtx struct {
	// git: a git directory (named .git, or shaped like one); its
	// configuration, commondir and hooks are protected.
	git bool
	// tree is set inside a protected directory (why it is protected):
	// every entry is protected.
	tree string
	// hooks: a hooks directory; *.sample files are never run.
	hooks bool
	// skip: a directory not entered (a git object store).
	skip bool
}

// The names that make a directory a git directory: HEAD and either
// objects and refs, or commondir (setup.c, is_git_directory; git follows
// links for each, so any type counts).
const (
	headName      = "HEAD"
	objectsName   = "objects"
	refsName      = "refs"
	commondirName = "commondir"
)

// names that matter in every directory, whatever it is: they decide
// whether it is a git directory, and are protected in one.
var gitNames = map[string]bool{
	headName: true, objectsName: true, refsName: true, commondirName: true,
	"config": true, "config.worktree": true, "hooks": true,
}

// A Finding is a protected name written during the run: Rel below the
// write root Root ("" for the root itself, a file).
type Finding struct {
	Root string
	Rel  string
	Why  string
	// id is the entry as the check saw it: the quarantine moves that
	// entry and nothing else.
	id ident
}

// Path is the finding's absolute path.
func (f Finding) Path() string {
	if f.Rel == "" {
		return f.Root
	}
	return filepath.Join(f.Root, f.Rel)
}

// A walker walks the write roots once.
type walker struct {
	spec Spec
	// ref is the snapshot this walk compares with: at the start, an
	// earlier snapshot (a cache: directories unchanged since it are not
	// read again); after the run, the start's.
	ref *Snapshot
	// end is set for the check after the run.
	end   bool
	out   *Snapshot
	files map[string]bool // protected file names
	// hooks are the hooks directories (real paths) and hookWay the
	// directories on the way to one from the top of its working tree (a
	// link or a file there redirects git), both guarded by hmu: the walk
	// adds a working tree's own as it finds the tree (relHooks).
	hooks    map[string]string
	hookWay  map[string]bool
	relHooks []string
	hmu      sync.RWMutex
	lim      Limits
	deadline time.Time // zero: none
	// par holds a token per goroutine walking besides the first; other
	// goroutines walk only when wide is set or the walk has entered more
	// than narrowDirs directories.
	par     chan struct{}
	wide    bool
	dirs    atomic.Int64
	entries atomic.Int64
	stopped atomic.Bool // a limit was reached
	mu      sync.Mutex  // guards what follows
	// unchecked says what the walk could not vouch for.
	unchecked []string
	found     []Finding
	// configs are the git configurations read at the start, for the
	// hooks directories they name: path of the working tree -> values.
	configs []configHooks
}

type configHooks struct {
	top   string // where relative values start
	hooks []string
}

var errStop = errors.New("limit")

// narrowDirs is how many directories a walk with a cache enters on one
// thread before it takes the others: about what one thread checks while
// bubblewrap and the init step start (5,000 directories take about
// 15 ms; a project of 100,000 files has about 2,000).
const narrowDirs = 5000

func newWalker(spec Spec, ref *Snapshot, end bool, lim Limits) *walker {
	w := &walker{spec: spec, ref: ref, end: end, files: map[string]bool{}, hooks: map[string]string{}, hookWay: map[string]bool{}, lim: lim}
	// The check after the run has the processors to itself: it walks on
	// all of them. The walk before the command runs while bubblewrap and
	// the init step start, which the command waits for as much as for the
	// walk: with a cache (one fstatat for most directories, which a second
	// thread does not make faster here) it keeps to one thread and leaves
	// them the others, until the tree proves larger than what they take
	// to start; without a cache (every directory read), it takes them all.
	w.par = make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))
	w.wide = end || ref == nil
	for _, f := range policy.MandatoryFiles {
		w.files[f] = true
	}
	w.out = &Snapshot{Taken: time.Now().UnixNano()}
	if lim.Time > 0 {
		w.deadline = time.Now().Add(lim.Time)
	}
	return w
}

// recent reports whether an entry with change time ctime, compared with
// snapshot s, may have changed within one tick of the clock that stamped
// it, so that an equal time proves nothing.
func recent(s *Snapshot, r *rootSnap, ctime int64) bool {
	return r == nil || !r.Local || ctime >= s.Taken-int64(granularity)
}

func (w *walker) refRoot(path string) *rootSnap {
	if w.ref == nil {
		return nil
	}
	for _, r := range w.ref.Roots {
		if r.Path == path {
			return r
		}
	}
	return nil
}

// root walks one write root.
func (w *walker) root(path string) {
	rs := &rootSnap{Path: path}
	w.out.Roots = append(w.out.Roots, rs)
	ref := w.refRoot(path)
	parent, err := openRoot(filepath.Dir(path))
	if err != nil {
		if w.absentParent(filepath.Dir(path), err) {
			return
		}
		rs.Partial = true
		return
	}
	defer unix.Close(parent)
	rs.Local = localFS(parent)
	name := filepath.Base(path)
	id, err := lstatAt(parent, name)
	if err != nil {
		if !errors.Is(err, unix.ENOENT) {
			w.note("%q: %v", path, err)
			rs.Partial = true
		}
		return
	}
	if !id.isDir() {
		// A file write root: compared as a protected entry when its name
		// is one, as any other name below a root is.
		var refLeaf *leaf
		if ref != nil {
			refLeaf = ref.File
		}
		rs.File = w.leaf(parent, name, id, refLeaf, ref, rs, false)
		if w.end && w.files[name] {
			if f, ok := w.compare(parent, rs, filepath.Dir(path), name, rs.File, refLeaf, ref, "a protected file"); ok {
				w.addFound(rs, path, id, dirCtx{}, []Finding{f})
			}
		}
		return
	}
	var refNode *node
	if ref != nil && ref.Dir != nil && ref.Dir.id.sameInode(id) {
		refNode = ref.Dir
	}
	fd, err := openDirAt(parent, name)
	if err != nil {
		w.note("%q: %v", path, err)
		rs.Partial = true
		return
	}
	defer unix.Close(fd)
	rs.Dir, err = w.dir(fd, path, id, refNode, ref, rs, dirCtx{git: name == ".git"}, 0)
	if err != nil {
		rs.Partial = true
	}
}

// absentParent reports whether the directory dir of a write root, which
// openRoot could not open (err), is not there: a component is missing and
// none before it is a link, so the root is absent and holds nothing to
// check, as a root that is not there itself. Anything else is noted, a
// link as such: a link there now (even one to nothing) is not an absence,
// and the walk does not vouch for what it may lead to. The check of a link
// follows the error: a link put there after openRoot looked is found.
func (w *walker) absentParent(dir string, err error) bool {
	var le *nofollow.LinkError
	if !errors.As(err, &le) {
		le = nofollow.FirstLink(dir)
	}
	switch {
	case le != nil:
		w.note("%q: cannot be opened without following a link (%v)", dir, le)
	case errors.Is(err, unix.ENOENT):
		return true
	default:
		w.note("%q: cannot be opened (%v)", dir, err)
	}
	return false
}

// note records what the walk could not vouch for.
func (w *walker) note(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unchecked = append(w.unchecked, fmt.Sprintf(format, args...))
}

// budget counts n entries and reports errStop past a limit.
func (w *walker) budget(n int) error {
	if w.entries.Add(int64(n)) > w.lim.Entries || !w.deadline.IsZero() && time.Now().After(w.deadline) {
		w.stopped.Store(true)
		return errStop
	}
	return nil
}

// childCtx is the context of the subdirectory name of a directory in
// context c (parentName its own name, git whether it is a git directory,
// kept whether it stays one after the check's move). Until the move, git
// reads its hooks directory and not its object store; after it, both are
// directories like any other: in one that does not stay a git directory,
// every name below hooks is protected, samples too, and the object store
// is entered.
func childCtx(c dirCtx, git, kept bool, parentName, name string) dirCtx {
	switch {
	case c.tree != "":
		return dirCtx{tree: c.tree, hooks: c.hooks}
	case git && name == "hooks":
		return dirCtx{tree: "a git hook", hooks: kept}
	case kept && name == objectsName:
		return dirCtx{skip: true} // git's object store: data only
	case name == ".git":
		return dirCtx{git: true}
	case name == ".vscode" || name == ".idea":
		return dirCtx{tree: "editor settings"}
	case parentName == ".claude" && name == "commands":
		return dirCtx{tree: "agent commands"}
	case parentName == ".claude" && name == "agents":
		return dirCtx{tree: "agent definitions"}
	}
	return dirCtx{}
}

// protectedDirNames are directories whose contents are protected; in
// their place, a link or a file is protected itself.
func protectedDirName(parentName, name string) bool {
	switch name {
	case ".git", ".vscode", ".idea", ".claude":
		return true
	case "commands", "agents":
		return parentName == ".claude"
	}
	return false
}

// matters reports whether the walk records the entry name (not a
// directory it enters) of a directory in context c.
func (w *walker) matters(c dirCtx, parentName, name string) bool {
	return c.tree != "" || gitNames[name] || w.files[name] || protectedDirName(parentName, name)
}

// protectedWhy says why the entry name (not a directory the walk enters)
// of a directory in context c is protected, or "" when it is not.
func (w *walker) protectedWhy(c dirCtx, git bool, parentName, name string) string {
	switch {
	case c.tree != "":
		if c.hooks && strings.HasSuffix(name, ".sample") {
			return "" // git never runs a sample
		}
		return c.tree
	case git && (name == "config" || name == "config.worktree"):
		return whyGitConfig
	case git && name == commondirName:
		return "git's commondir, which moves the configuration and hooks elsewhere"
	case git && name == "hooks":
		return "a link or file in place of git's hooks directory"
	case w.files[name]:
		return "a protected file"
	case name == ".git":
		return "a .git file or link, which points git at another repository"
	case protectedDirName(parentName, name):
		return "a link or file in place of a protected directory"
	}
	return ""
}

const whyGitConfig = "git configuration"

// gitShaped reports whether names make a directory a git directory to
// git: HEAD (not a directory), and objects and refs, or commondir.
func gitShaped(has map[string]uint8) bool {
	h, ok := has[headName]
	if !ok || h == unix.DT_DIR {
		return false
	}
	_, o := has[objectsName]
	_, r := has[refsName]
	_, c := has[commondirName]
	return o && r || c
}

// keepsShape reports whether the directory fd, a git directory by the
// names in has at the end of the run, stays one after the check moves
// what it finds there: a commondir not in ref (what the start recorded;
// nil: a directory made during the run) as it is now is a finding, and
// the shape it gave goes with it.
func keepsShape(fd int, has map[string]uint8, ref *node) bool {
	if _, ok := has[commondirName]; !ok {
		return gitShaped(has)
	}
	var old *leaf
	if ref != nil {
		old = ref.leaves[commondirName]
	}
	if id, err := lstatAt(fd, commondirName); err != nil || old == nil || !old.id.unchanged(id) {
		kept := maps.Clone(has)
		delete(kept, commondirName)
		return gitShaped(kept)
	}
	return gitShaped(has)
}

// entryType is the type of an entry as its directory reported it, or as
// lstat says when the directory does not say (DT_UNKNOWN).
func entryType(fd int, e dirent) uint8 {
	if e.typ != unix.DT_UNKNOWN {
		return e.typ
	}
	id, err := lstatAt(fd, e.name)
	if err != nil {
		return unix.DT_UNKNOWN
	}
	switch id.typ() {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

// names are a node's entries as a listing, for a directory whose names
// did not change since the node was made.
func (n *node) names() []dirent {
	out := make([]dirent, 0, len(n.dirs)+len(n.leaves))
	for name := range n.dirs {
		out = append(out, dirent{name, unix.DT_DIR})
	}
	for name, l := range n.leaves {
		t := uint8(unix.DT_UNKNOWN)
		switch l.id.typ() {
		case unix.S_IFREG:
			t = unix.DT_REG
		case unix.S_IFLNK:
			t = unix.DT_LNK
		}
		out = append(out, dirent{name, t})
	}
	return out
}

// dir walks the directory fd, at path p with identity id, in context c;
// ref is the node of the same inode in the snapshot compared with (nil:
// none; after the run, a directory that is new since the start), refRoot
// its root there.
func (w *walker) dir(fd int, p string, id ident, ref *node, refRoot, rs *rootSnap, c dirCtx, depth int) (*node, error) {
	if why := w.hooksWhy(p); why != "" && c.tree == "" {
		c = dirCtx{tree: why, hooks: true}
	}
	n := &node{id: id, ctx: c}
	if c.skip {
		return n, nil
	}
	var ents []dirent
	if ref != nil && ref.read && ref.ctx == c && ref.id.unchanged(id) && !recent(w.ref, refRoot, id.Ctime) {
		ents = ref.names() // the same names as then
	} else {
		list, err := readDir(fd, w.lim.DirEntries)
		if errors.Is(err, unix.ENOENT) {
			// Removed since it was opened: a removed directory holds
			// nothing and no name reaches it.
			n.read = true
			return n, nil
		}
		if err != nil {
			w.unreadable(unix.AT_FDCWD, p, rs, p, id, ref, err)
			return n, nil
		}
		ents = list
	}
	if err := w.budget(len(ents)); err != nil {
		return n, err
	}
	n.read = true
	n.dirs, n.leaves = map[string]*node{}, map[string]*leaf{}
	has := map[string]uint8{}
	for i := range ents {
		if gitNames[ents[i].name] {
			ents[i].typ = entryType(fd, ents[i])
			has[ents[i].name] = ents[i].typ
		}
		if ents[i].name == ".git" {
			// The top of a working tree: the user's relative
			// core.hooksPath values name directories below it.
			w.addTreeHooks(p)
		}
	}
	name := filepath.Base(p)
	git := c.git || c.tree == "" && gitShaped(has)
	if w.end && git && !c.git && ref != nil && !refShaped(ref) {
		// Made a git directory during the run: git would read its
		// configuration and run its hooks. Take the HEAD written during
		// the run away, and git no longer sees one.
		git = !w.unshape(fd, rs, p, ref)
	}
	kept := git
	if w.end && git && !c.git {
		kept = keepsShape(fd, has, ref)
	}
	// Subdirectories are walked here, or by another goroutine when one
	// is free (a walk is system calls: one per directory at least).
	type sub struct {
		name  string
		child *node
	}
	var subs []*sub
	var mine []Finding // what this directory's own entries give
	var wg sync.WaitGroup
	defer wg.Wait() // fd stays open until every subdirectory is walked
	for _, e := range ents {
		typ := entryType(fd, e)
		if typ == unix.DT_DIR {
			cc := childCtx(c, git, kept, name, e.name)
			var refChild *node
			if ref != nil {
				refChild = ref.dirs[e.name]
			}
			if w.stopped.Load() {
				w.frontier(fd, rs, p, e.name, refChild)
				continue
			}
			sb := &sub{name: e.name}
			subs = append(subs, sb)
			walk := func() {
				child, err := w.subdir(fd, p, id.Dev, sb.name, refChild, refRoot, rs, cc, depth+1)
				sb.child = child
				if err != nil {
					w.stopped.Store(true)
				}
			}
			if !w.wide && w.dirs.Load() <= narrowDirs {
				walk()
				continue
			}
			select {
			case w.par <- struct{}{}:
				wg.Add(1)
				go func() {
					defer func() { <-w.par; wg.Done() }()
					walk()
				}()
			default:
				walk()
			}
			continue
		}
		way := w.onHookWay(p + "/" + e.name)
		if !w.matters(c, name, e.name) && !way {
			continue
		}
		lid, err := lstatAt(fd, e.name)
		if err != nil {
			continue // gone meanwhile
		}
		var refLeaf *leaf
		if ref != nil {
			refLeaf = ref.leaves[e.name]
		}
		l := w.leaf(fd, e.name, lid, refLeaf, refRoot, rs, git && isConfigName(e.name))
		n.leaves[e.name] = l
		if !w.end {
			if git && (e.name == "config" || e.name == "config.worktree") && len(l.hooks) > 0 {
				top := p
				if c.git && name == ".git" {
					top = filepath.Dir(p)
				}
				w.mu.Lock()
				w.configs = append(w.configs, configHooks{top, l.hooks})
				w.mu.Unlock()
			}
			continue
		}
		why := w.protectedWhy(c, git, name, e.name)
		if why == "" && way {
			why = "a link or file on the way to a git hooks directory (core.hooksPath), which redirects git's hooks"
		}
		if why != "" {
			if f, ok := w.compare(fd, rs, p, e.name, l, refLeaf, refRoot, why); ok {
				mine = append(mine, f)
			}
		}
	}
	w.addFound(rs, p, id, c, mine)
	wg.Wait()
	for _, sb := range subs {
		if sb.child != nil {
			n.dirs[sb.name] = sb.child
		}
	}
	if w.stopped.Load() {
		return n, errStop
	}
	return n, nil
}

// hooksWhy says why the directory p holds hooks, or "".
func (w *walker) hooksWhy(p string) string {
	w.hmu.RLock()
	defer w.hmu.RUnlock()
	return w.hooks[p]
}

// onHookWay reports whether p is a hooks directory or on the way to one
// from its working tree's top.
func (w *walker) onHookWay(p string) bool {
	w.hmu.RLock()
	defer w.hmu.RUnlock()
	return w.hookWay[p] || w.hooks[p] != ""
}

// addTreeHooks protects, in the working tree whose top is p, the
// directories the relative core.hooksPath values of the user's
// configuration name, and the way to each.
func (w *walker) addTreeHooks(p string) {
	if len(w.relHooks) == 0 {
		return
	}
	w.hmu.Lock()
	defer w.hmu.Unlock()
	for _, h := range w.relHooks {
		d := gitconfig.HooksDir(w.spec.Home, p, h)
		if d == "" || !strings.HasPrefix(d, p+"/") {
			continue // above the top: not this tree's to walk
		}
		if w.hooks[d] == "" {
			w.hooks[d] = whyHooksPath
		}
		for at := filepath.Dir(d); at != p && strings.HasPrefix(at, p+"/"); at = filepath.Dir(at) {
			w.hookWay[at] = true
		}
	}
}

// refShaped reports whether a node of the snapshot compared with was a
// git directory by its shape.
func refShaped(ref *node) bool {
	if !ref.read {
		return true // not known: the stricter reading
	}
	has := map[string]uint8{}
	for name := range ref.dirs {
		if gitNames[name] {
			has[name] = unix.DT_DIR
		}
	}
	for name, l := range ref.leaves {
		if gitNames[name] {
			has[name] = unix.DT_REG
			if l.id.isDir() {
				has[name] = unix.DT_DIR
			}
		}
	}
	return gitShaped(has)
}

// subdir opens and walks the subdirectory name of the directory fd (at
// path p).
func (w *walker) subdir(fd int, p string, dev uint64, name string, ref *node, refRoot, rs *rootSnap, c dirCtx, depth int) (*node, error) {
	w.dirs.Add(1)
	cp := p + "/" + name
	if p == "/" {
		cp = "/" + name
	}
	if c.skip || cp == "/proc" || cp == "/dev" {
		// Not entered: git's object store holds data; every sandbox has
		// its own /proc and /dev, not the host's.
		return &node{ctx: dirCtx{skip: true}}, nil
	}
	if ref != nil && ref.read && len(ref.dirs) == 0 && len(ref.leaves) == 0 && ref.ctx == c && w.hooksWhy(cp) == "" {
		// A directory that held nothing that matters: if it is unchanged,
		// it still does, and one fstatat says so.
		if id, err := lstatAt(fd, name); err == nil && ref.id.unchanged(id) && !recent(w.ref, refRoot, id.Ctime) {
			return ref, w.budget(0)
		}
	}
	cfd, err := openDirAt(fd, name)
	for try := 0; err != nil; try++ {
		id, serr := lstatAt(fd, name)
		if serr != nil {
			return nil, nil // gone meanwhile
		}
		if !id.isDir() {
			return nil, nil // replaced meanwhile: not the walk's to follow
		}
		if try < maxReopen && replaced(err) {
			// Removed, or a link or file put in its place, between the
			// two calls, and a directory made there again: the one there
			// now is the one to walk.
			cfd, err = openDirAt(fd, name)
			continue
		}
		w.unreadable(fd, name, rs, cp, id, matchInode(ref, id), err)
		return &node{id: id, ctx: c}, nil
	}
	defer unix.Close(cfd)
	id, err := fstatFD(cfd)
	if err != nil {
		return nil, nil
	}
	if id.Dev != dev && kernelFS(cfd) {
		return &node{id: id, ctx: dirCtx{skip: true}}, nil // nothing can be planted there
	}
	ref = matchInode(ref, id)
	if depth > MaxDepth {
		w.unreadable(fd, name, rs, cp, id, ref, fmt.Errorf("more than %d levels below %q", MaxDepth, rs.Path))
		return &node{id: id, ctx: c}, nil
	}
	return w.dir(cfd, cp, id, ref, refRoot, rs, c, depth)
}

// matchInode is ref if it is the node of the inode id, else nil.
func matchInode(ref *node, id ident) *node {
	if ref != nil && ref.id.sameInode(id) && ref.id.typ() == id.typ() {
		return ref
	}
	return nil
}

// unreadable handles a directory the walk cannot read or enter (err),
// the entry name of the directory fd. One of another user's that this
// user cannot search holds nothing the command (this user, without
// capabilities) could reach: there is nothing to check. One of another
// user's that this user can neither list nor write (0711) is not this
// user's either: the command cannot make a name in it, and the user's
// own tools do not work there; it is passed over (what such a directory
// hides could still hold a directory anyone may write: docs/security.md
// says so). This user's own directory is never passed over: the command
// could have written in it and then taken its permissions away. One the
// walk could not read for want of resources (descriptors, memory) is not
// checked, never moved: the command may have caused the want. Otherwise,
// unchanged since the start (or at the start) it is not checked; new or
// changed, what is inside cannot be checked, and it goes to the
// quarantine whole.
func (w *walker) unreadable(fd int, name string, rs *rootSnap, p string, id ident, ref *node, err error) {
	if errors.Is(err, unix.EACCES) && !ownedHere(fd, name) && (!searchable(fd, name) || !writable(fd, name)) {
		return
	}
	if !w.end || transient(err) || ref != nil && ref.id.unchanged(id) {
		w.note("%q: %v", p, err)
		return
	}
	w.find(rs, filepath.Dir(p), filepath.Base(p), id, fmt.Sprintf("a directory written during the run that srt cannot check (%v)", err))
}

// maxReopen is how many times the walk opens again a directory that was
// replaced while it opened it; one replaced every time is not checked.
const maxReopen = 8

// replaced reports whether err, from opening a name that is a directory
// now, says that something else was there when it was opened.
func replaced(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// transient reports whether err says the walk lacked a resource rather
// than what the directory is.
func transient(err error) bool {
	for _, e := range []unix.Errno{unix.EMFILE, unix.ENFILE, unix.ENOMEM, unix.ENOBUFS, unix.EAGAIN, unix.EINTR, unix.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// frontier handles a subdirectory the walk did not reach, a limit having
// stopped it: a new one goes to the quarantine whole, one that existed at
// the start is noted.
func (w *walker) frontier(fd int, rs *rootSnap, p, name string, ref *node) {
	w.mu.Lock()
	rs.Partial = true
	w.mu.Unlock()
	if !w.end {
		return
	}
	id, err := lstatAt(fd, name)
	if err != nil || !id.isDir() {
		return
	}
	if ref = matchInode(ref, id); ref != nil {
		w.note("%q: not reached (the walk stopped at its limit)", filepath.Join(p, name))
		return
	}
	// An empty directory runs nothing (and is what a placeholder's mount
	// point looks like): it stays.
	cfd, err := openDirAt(fd, name)
	if err != nil {
		if transient(err) {
			w.note("%q: %v", filepath.Join(p, name), err)
			return
		}
	} else {
		ents, err := readDir(cfd, 1)
		unix.Close(cfd)
		if err == nil && len(ents) == 0 {
			return
		}
	}
	w.find(rs, p, name, id, "a directory written during the run that the check did not reach (it stopped at its limit)")
}

// unshape takes away the HEAD that made the directory fd (at p) a git
// directory during the run, and reports whether it did: git no longer
// takes it for one.
func (w *walker) unshape(fd int, rs *rootSnap, p string, ref *node) bool {
	id, err := lstatAt(fd, headName)
	if err != nil || id.isDir() {
		return false
	}
	if old := ref.leaves[headName]; old != nil && old.id.unchanged(id) {
		return false // HEAD was there: objects or refs were added
	}
	w.find(rs, p, headName, id, "a HEAD written during the run, which makes git take this directory for a repository of its own (with the objects and refs beside it)")
	return true
}

// leaf records the entry name of the directory fd; hooks asks for the
// core.hooksPath values of a git configuration (at the start only).
func (w *walker) leaf(fd int, name string, id ident, ref *leaf, refRoot, rs *rootSnap, hooks bool) *leaf {
	l := &leaf{id: id}
	if id.isLink() {
		l.link, _ = readLinkAt(fd, name)
		return l
	}
	if !id.isReg() {
		return l
	}
	hooks = hooks && !w.end
	if ref != nil && ref.id.unchanged(id) && !recent(w.ref, refRoot, id.Ctime) && (ref.hashed || !hooks) {
		// Unchanged since: the content too.
		l.sum, l.hashed, l.hooks = ref.sum, ref.hashed, ref.hooks
		return l
	}
	// The content is read when a later comparison may need it (the
	// change time is too recent to prove anything), or for the hooks.
	need := hooks || !w.end && recent(w.out, rs, id.Ctime) || w.end && ref != nil && ref.id.unchanged(id)
	if !need {
		return l
	}
	b, err := readAt(fd, name, id, maxRead)
	if err != nil {
		return l
	}
	l.sum, l.hashed = sha256.Sum256(b), true
	if hooks {
		l.hooks = gitconfig.HooksPaths(b)
	}
	return l
}

func isConfigName(name string) bool { return name == "config" || name == "config.worktree" }

// compare returns the finding of the protected entry name of directory
// p, if it is new or changed since the start (ref, in refRoot) and can do
// harm.
func (w *walker) compare(fd int, rs *rootSnap, p, name string, l, ref *leaf, refRoot *rootSnap, why string) (Finding, bool) {
	if ref != nil && ref.id.unchanged(l.id) && l.link == ref.link {
		if !recent(w.ref, refRoot, l.id.Ctime) || !l.id.isReg() {
			return Finding{}, false
		}
		if ref.hashed && l.hashed && ref.sum == l.sum {
			return Finding{}, false
		}
	}
	if l.id.isReg() && l.id.Size == 0 {
		return Finding{}, false // runs nothing; what placeholders look like
	}
	if why == whyGitConfig {
		if !w.spec.GitConfig {
			return Finding{}, false // filesystem.allowGitConfig: the command's to write
		}
		if why = gitConfigWhy(fd, name, l.id); why == "" {
			return Finding{}, false
		}
	}
	return finding(rs, p, name, l.id, why), true
}

// finding is the entry name of directory p, seen as id, below the root
// of rs.
func finding(rs *rootSnap, p, name string, id ident, why string) Finding {
	rel, err := filepath.Rel(rs.Path, filepath.Join(p, name))
	if err != nil || rel == "." || strings.HasPrefix(rel, "../") {
		rel = "" // the root itself (a file write root)
	}
	return Finding{Root: rs.Path, Rel: rel, id: id, Why: why}
}

// find records a finding: the entry name of directory p, as id.
func (w *walker) find(rs *rootSnap, p, name string, id ident, why string) {
	w.mu.Lock()
	w.found = append(w.found, finding(rs, p, name, id, why))
	w.mu.Unlock()
}

// maxDirFindings is the most findings one protected directory (a hooks
// directory, .vscode) gives one by one: with more, the directory goes to
// the quarantine whole, as one item, so that a command that plants a
// hundred thousand hooks costs one move, not a hundred thousand.
const maxDirFindings = 32

// found records the findings of the directory p (seen as id, in context
// c): one by one, or, in a protected directory with more than
// maxDirFindings, the directory whole.
func (w *walker) addFound(rs *rootSnap, p string, id ident, c dirCtx, mine []Finding) {
	if len(mine) == 0 {
		return
	}
	if c.tree != "" && len(mine) > maxDirFindings {
		why := fmt.Sprintf("%s: a directory in which the run wrote %d protected entries, moved whole (it may hold entries of the user's too: release it only once the others are gone)", c.tree, len(mine))
		mine = []Finding{finding(rs, filepath.Dir(p), filepath.Base(p), id, why)}
	}
	w.mu.Lock()
	w.found = append(w.found, mine...)
	w.mu.Unlock()
}
