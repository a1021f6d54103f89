// Package resolve turns a symbolic bubblewrap plan (package emit/bwrap) into
// the concrete bubblewrap arguments for this host: it fills in the home and
// working directories, and decides each @ step against the file system as
// it is now (docs/reference.md#bwrap-order, docs/reference.md#write-roots): which paths exist, whether they are
// files or directories, where symlinks lead, what globs match, and what the
// mandatory-deny scan finds below the working directory.
//
// Resolve never weakens a plan silently: a step it cannot enforce is an
// error, and everything it leaves out is explained in Result.Notes.
package resolve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// MaxArgs is the most arguments bubblewrap accepts (it refuses more than
// 9000 words).
const MaxArgs = 9000

// Host is what Resolve needs to know of this run.
type Host struct {
	// Home and Cwd are absolute; they replace ${HOME} and ${CWD}.
	Home, Cwd string
	// EmptyDir is an empty directory, outside the user's tree and not
	// writable by anyone else, used as the source of placeholder
	// directories. Needed only when a placeholder directory is.
	EmptyDir string
	// SeccompFD is the descriptor bubblewrap reads the seccomp program
	// from; a plan with @seccomp and no descriptor is an error.
	SeccompFD int
	// ProxyEnv are the NAME=VALUE pairs of @proxy-env.
	ProxyEnv []string
	// MaskValue returns the sentinel a masked variable is set to.
	MaskValue func(name string) string
	// GitConfigCount is the caller's GIT_CONFIG_COUNT (0 if unset); the
	// safe.directory entries are numbered after it.
	GitConfigCount int
	// MaskedCopy returns a file holding what the command sees of a masked
	// credential file (the secrets replaced by sentinels), outside the
	// user's tree. When nil, or when it fails, the file is hidden instead,
	// which is stricter.
	MaskedCopy func(path string) (string, error)
	// TmpDir is a new, empty directory of this run, private to the user,
	// bound writable at the @private-tmp operand (the command's TMPDIR).
	// Needed only when the plan has that step.
	TmpDir string
}

// Result is a resolved plan.
type Result struct {
	// Args are the bubblewrap arguments, without "--" and the command.
	Args []string
	// Lines are, for each of Args, the Line of the step it came from (the
	// line of linux/bwrap.args); 0 for what the runtime added itself.
	Lines []int
	// Placeholders are host paths that do not exist and that bubblewrap
	// will create as mount points; the caller removes them afterwards.
	Placeholders []string
	// Notes say what was left out and why, for the debug log.
	Notes []string
	// WriteRoots are the real paths bound writable.
	WriteRoots []string
}

// Resolve resolves a plan for h.
func Resolve(steps []bwrap.Step, h Host) (*Result, error) {
	if !filepath.IsAbs(h.Home) || !filepath.IsAbs(h.Cwd) {
		return nil, fmt.Errorf("resolve: home %q and working directory %q must be absolute", h.Home, h.Cwd)
	}
	r := &resolver{h: h, res: &Result{}, from: map[string]int{}}
	if err := checkSteps(steps); err != nil {
		return nil, err
	}
	if err := r.collect(steps); err != nil {
		return nil, err
	}
	if err := r.emit(steps); err != nil {
		return nil, err
	}
	r.res.WriteRoots = r.writeRoots
	for _, a := range r.res.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("resolve: %q contains a NUL byte, which no command line can carry", a)
		}
	}
	if len(r.res.Args) > MaxArgs {
		return nil, fmt.Errorf("resolve: %d bubblewrap arguments; bubblewrap accepts at most %d (narrow the globs or the lists)", len(r.res.Args), MaxArgs)
	}
	return r.res, nil
}

type resolver struct {
	h   Host
	res *Result

	writeRoots []string   // real paths bound writable, in order
	readDeny   []denyUnit // sorted shallow first
	allowRead  []string   // names (expanded, cleaned) that reopen reads
	denyWrite  []string   // resolved destinations, in order, deduplicated
	masks      []mount    // credential file masks: copy -> real file
	scanDenies []string
	usedEmpty  bool
	tmp        *mount // the run's TMPDIR: host directory -> its place inside

	// cur is the line of the step being resolved; from maps a kind and a
	// path ("w/path": write root, "d": read deny, "a": read allow, "m":
	// mask, "x": write deny, "p": pin) to the line of the step behind it.
	cur      int
	from     map[string]int
	rootLine int  // the line of --ro-bind / /
	gitDone  bool // the safe directories are written
}

// mark records that the step being resolved named p as kind.
func (r *resolver) mark(kind byte, p string) {
	k := string(kind) + p
	if _, ok := r.from[k]; !ok {
		r.from[k] = r.cur
	}
}

// at makes the next arguments come from the step that named p as kind
// (the root mount's line when none did).
func (r *resolver) at(kind byte, p string) *resolver {
	if l, ok := r.from[string(kind)+p]; ok {
		r.cur = l
	} else {
		r.cur = r.rootLine
	}
	return r
}

// denyUnit is one hidden path: a tmpfs over a directory or /dev/null over
// anything else.
type denyUnit struct {
	path    string
	dir     bool
	standIn bool // hides more than asked, with nothing restored below
}

func (r *resolver) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

// expand fills in the symbolic roots and cleans the path.
func (r *resolver) expand(p string) string {
	switch {
	case p == policy.Home || strings.HasPrefix(p, policy.Home+"/"):
		p = r.h.Home + strings.TrimPrefix(p, policy.Home)
	case p == policy.Cwd || strings.HasPrefix(p, policy.Cwd+"/"):
		p = r.h.Cwd + strings.TrimPrefix(p, policy.Cwd)
	}
	return filepath.Clean(p)
}

// targets returns the host paths a path step names: the path itself, and
// for a pattern every existing match as well (the dual reading).
func (r *resolver) targets(s bwrap.Step) ([]string, error) {
	p := r.expand(s.Operand)
	if s.Qualifier != bwrap.Pattern {
		return []string{p}, nil
	}
	// The directory behind ${HOME} or ${CWD} is a name, whatever
	// characters it has: only the rest of the operand is a pattern.
	root, rel := "", s.Operand
	for _, sym := range []struct{ sym, dir string }{{policy.Home, r.h.Home}, {policy.Cwd, r.h.Cwd}} {
		if rest, ok := strings.CutPrefix(s.Operand, sym.sym+"/"); ok {
			root, rel = filepath.Clean(sym.dir), rest
		}
	}
	matches, err := glob(root, rel)
	if err != nil {
		return nil, fmt.Errorf("@%s %s: %w", s.Name(), s.Operand, err)
	}
	if _, err := os.Lstat(p); err == nil {
		matches = append([]string{p}, matches...)
	}
	return matches, nil
}

// collect gathers the file-system steps.
func (r *resolver) collect(steps []bwrap.Step) error {
	var convenience []string
	scanLine := 0
	convLine := map[string]int{}
	for _, s := range steps {
		if s.Directive == bwrap.PrivateTmp {
			if r.h.TmpDir == "" {
				return fmt.Errorf("@%s %s: no directory was made for the run's TMPDIR", s.Directive, s.Operand)
			}
			r.tmp = &mount{src: r.h.TmpDir, dest: filepath.Clean(s.Operand)}
		}
	}
	for _, s := range steps {
		r.cur = s.Line
		switch s.Directive {
		case bwrap.AllowWrite:
			ts, err := r.targets(s)
			if err != nil {
				return err
			}
			for _, t := range ts {
				if s.Qualifier == bwrap.UnlessHidden {
					convenience = append(convenience, t)
					convLine[t] = s.Line
					continue
				}
				r.addWriteRoot(t)
			}
		case bwrap.AllowRead:
			ts, err := r.targets(s)
			if err != nil {
				return err
			}
			for _, t := range ts {
				r.mark('a', t)
			}
			r.allowRead = append(r.allowRead, ts...)
		}
	}
	for _, s := range steps {
		r.cur = s.Line
		name := s.Directive
		switch name {
		case bwrap.MaskFile:
			ts, err := r.targets(s)
			if err != nil {
				return err
			}
			for _, t := range ts {
				r.addMask(t)
			}
		case bwrap.DenyRead:
			ts, err := r.targets(s)
			if err != nil {
				return err
			}
			for _, t := range ts {
				r.addReadDeny(t)
			}
		case bwrap.MandatoryScan:
			found, err := r.scan(s.Operand)
			if err != nil {
				return err
			}
			r.scanDenies = found
			scanLine = s.Line
		}
	}
	sort.SliceStable(r.readDeny, func(i, j int) bool { return depth(r.readDeny[i].path) < depth(r.readDeny[j].path) })
	// The convenience directories are dropped when a read deny hides them.
	for _, c := range convenience {
		r.cur = convLine[c]
		if r.hidden(c) {
			r.note("%s: not writable, a read deny hides it", c)
			continue
		}
		r.addWriteRoot(c)
	}
	if r.tmp != nil {
		// Last: bound after every write root that could cover it.
		r.writeRoots = append(r.writeRoots, r.tmp.dest)
	}
	for _, s := range steps {
		r.cur = s.Line
		name := s.Directive
		if name != bwrap.DenyWrite {
			continue
		}
		ts, err := r.targets(s)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if err := r.addDenyWrite(t); err != nil {
				return err
			}
		}
	}
	r.cur = scanLine
	for _, t := range r.scanDenies {
		if err := r.addDenyWrite(t); err != nil {
			return err
		}
	}
	return nil
}

// addWriteRoot adds an allow-write path if it exists, is not a device and
// is not a symlink that leads outside its own spelling.
func (r *resolver) addWriteRoot(p string) {
	if p == "/dev" || strings.HasPrefix(p, "/dev/") {
		return // --dev /dev provides the devices
	}
	fi, err := os.Lstat(p)
	if err != nil {
		r.note("%s: not writable, it does not exist", p)
		return
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		r.note("%s: not writable, it cannot be resolved: %v", p, err)
		return
	}
	if fi.Mode()&os.ModeSymlink != 0 && !within(real, p) {
		r.note("%s: not writable, it is a symlink to %s, outside itself", p, real)
		return
	}
	if r.tmp != nil && (within(p, r.tmp.dest) || within(real, r.tmp.dest)) {
		r.note("%s: the sandbox's %s is the run's own TMPDIR, writable already; the host's is not bound", p, r.tmp.dest)
		return
	}
	r.mark('w', real)
	for _, w := range r.writeRoots {
		if w == real {
			return
		}
	}
	r.writeRoots = append(r.writeRoots, real)
}

// addReadDeny hides p where it really is.
func (r *resolver) addReadDeny(p string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		_, lerr := os.Lstat(p)
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
			return // absent: nothing to hide
		case lerr != nil:
			// Cannot be inspected (a parent without search permission):
			// hide the nearest ancestor that can be, rather than nothing.
			r.standIn(p, lerr)
			return
		}
		real = p // a dangling or looping link: hide the link itself
	}
	// A deny lifted by an allow read of the very same path hides nothing.
	for _, a := range r.allowRead {
		if a == p || a == real {
			return
		}
	}
	if real == "/" {
		// Never a tmpfs over the root: hide each top-level entry instead.
		entries, err := os.ReadDir("/")
		if err == nil {
			for _, e := range entries {
				if n := e.Name(); n != "proc" && n != "dev" && n != "sys" {
					r.addReadDeny("/" + n)
				}
			}
		}
		return
	}
	fi, err := os.Stat(real)
	dir := err == nil && fi.IsDir()
	r.mark('d', real)
	for _, u := range r.readDeny {
		if u.path == real {
			return
		}
	}
	r.readDeny = append(r.readDeny, denyUnit{path: real, dir: dir})
}

// standIn hides the nearest inspectable ancestor of p (never "/"), with no
// restores below it (docs/reference.md#read-denies).
func (r *resolver) standIn(p string, why error) {
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			r.note("%s: cannot be inspected (%v); hiding %s instead", p, why, d)
			r.mark('d', d)
			r.readDeny = append(r.readDeny, denyUnit{path: d, dir: true, standIn: true})
			return
		}
	}
	r.note("%s: cannot be inspected (%v), and no ancestor below / can be hidden", p, why)
}

// addMask shows the command a masked copy of a credential file, or hides
// the file when there is no copy to show.
func (r *resolver) addMask(p string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return // absent: nothing to mask
	}
	if fi, err := os.Stat(real); err != nil || fi.IsDir() {
		r.note("%s: a directory cannot be masked; hidden instead", p)
		r.addReadDeny(p)
		return
	}
	if r.h.MaskedCopy == nil {
		r.note("%s: no masked copy available; hidden instead", p)
		r.addReadDeny(p)
		return
	}
	copyPath, err := r.h.MaskedCopy(real)
	if err != nil {
		r.note("%s: masking failed (%v); hidden instead", p, err)
		r.addReadDeny(p)
		return
	}
	r.mark('m', real)
	r.masks = append(r.masks, mount{copyPath, real})
}

// hidden reports whether a read deny covers p and no read allow inside
// that deny opens p again.
func (r *resolver) hidden(p string) bool {
	for _, u := range r.readDeny {
		if !within(p, u.path) {
			continue
		}
		open := false
		for _, a := range r.allowRead {
			if within(p, a) && within(a, u.path) {
				open = true
			}
		}
		if !open {
			return true
		}
	}
	return false
}

// addDenyWrite records a write-protected destination, resolved through
// symlinks (the part that does not exist yet is kept as written).
func (r *resolver) addDenyWrite(p string) error {
	// A symlink on the way that the sandbox can replace (its directory is
	// writable) would let the command put a real file or directory where
	// the protected one is: no mount can pin a symlink, so refuse.
	for prefix := p; prefix != "/" && prefix != "."; prefix = filepath.Dir(prefix) {
		fi, err := os.Lstat(prefix)
		if err == nil && fi.Mode()&os.ModeSymlink != 0 && r.writable(filepath.Dir(prefix)) {
			return fmt.Errorf("resolve: %s is write-protected, but %s on its way is a symlink in a writable directory, which the sandboxed command could replace; list the real path, or remove the link", p, prefix)
		}
	}
	real := resolveMissing(p)
	if real == "/dev" || strings.HasPrefix(real, "/dev/") {
		return nil
	}
	r.mark('x', real)
	for _, d := range r.denyWrite {
		if d == real {
			return nil
		}
	}
	r.denyWrite = append(r.denyWrite, real)
	return nil
}

// resolveMissing resolves the deepest existing ancestor of p through
// symlinks and re-joins the missing tail.
func resolveMissing(p string) string {
	tail := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return filepath.Join(cur, tail) // a broken link: protect it as named
			}
			return filepath.Join(real, tail)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
}

// writable reports whether p is at or below one of the write roots.
func (r *resolver) writable(p string) bool {
	for _, w := range r.writeRoots {
		if within(p, w) {
			return true
		}
	}
	return false
}

// emit writes the arguments in the plan's order: a --option line word for
// word (the symbolic roots filled in), a directive through its resolver.
func (r *resolver) emit(steps []bwrap.Step) error {
	for _, s := range steps {
		r.cur = s.Line
		if s.Args != nil {
			for _, a := range s.Args {
				r.add(r.expandArg(a))
			}
			if len(s.Args) == 3 && (s.Args[0] == "--ro-bind" || s.Args[0] == "--bind") && s.Args[1] == "/" && s.Args[2] == "/" {
				if s.Args[0] == "--ro-bind" {
					r.rootLine = s.Line
					r.emitFilesystem()
				}
			}
			continue
		}
		name := s.Directive
		if d := directives[name]; d.emit != nil {
			if err := d.emit(r, s, steps); err != nil {
				return stepError(s, err)
			}
		}
	}
	return nil
}

func (r *resolver) add(args ...string) {
	r.res.Args = append(r.res.Args, args...)
	for range args {
		r.res.Lines = append(r.res.Lines, r.cur)
	}
}

// kernelMask hides a kernel interface of /proc or /sys that exists on this
// host (the sandbox's /proc and /sys show the same kernel): an empty
// read-only tmpfs over a directory, /dev/null over anything else. A path
// this kernel does not have needs nothing; one srt cannot look at stops the
// run rather than leaving it uncovered.
func (r *resolver) kernelMask(p string) error {
	if !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/sys/") {
		return fmt.Errorf("@%s %s: only paths below /proc and /sys can be masked this way", bwrap.KernelMask, p)
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.note("@%s %s: not on this host, nothing to hide", bwrap.KernelMask, p)
	case err != nil:
		return fmt.Errorf("@%s %s: cannot tell whether this kernel has it, so it cannot be hidden: %w", bwrap.KernelMask, p, err)
	case fi.IsDir():
		r.add("--tmpfs", p, "--remount-ro", p)
	default:
		r.add("--ro-bind", "/dev/null", p)
	}
	return nil
}

func (r *resolver) expandArg(a string) string {
	if strings.HasPrefix(a, policy.Home) || strings.HasPrefix(a, policy.Cwd) {
		return r.expand(a)
	}
	return a
}

// gitSafe marks directories safe.directory through GIT_CONFIG_* variables
// (docs/reference.md#linux-environment): each directory and everything below it, or "*" for
// more than eight.
func (r *resolver) gitSafe(dirs []string) {
	n := r.h.GitConfigCount
	for _, v := range policy.GitSafeValues(dirs) {
		r.add("--setenv", fmt.Sprintf("GIT_CONFIG_KEY_%d", n), "safe.directory")
		r.add("--setenv", fmt.Sprintf("GIT_CONFIG_VALUE_%d", n), v)
		n++
	}
	r.add("--setenv", "GIT_CONFIG_COUNT", strconv.Itoa(n))
}

// emitFilesystem writes the file-system mounts after "--ro-bind / /"
// (docs/reference.md#bwrap-order): ancestor pins, write roots, the read-deny section
// with its restores, write denies, the re-application pass, and the
// placeholder source, read-only, last.
func (r *resolver) emitFilesystem() {
	protected := []string{}
	for _, u := range r.readDeny {
		protected = append(protected, u.path)
	}
	denyBinds := r.denyWriteMounts()
	for _, m := range denyBinds {
		protected = append(protected, m.dest)
	}
	for _, m := range r.masks {
		protected = append(protected, m.dest)
	}
	pins := r.pins(protected)
	rootWritable := false
	for _, w := range r.writeRoots {
		rootWritable = rootWritable || w == "/"
	}
	if !rootWritable {
		// Pins first: the write roots are bound over them, so they stay
		// invisible, but their directories become busy mount points.
		for _, pin := range pins {
			r.at('p', pin).add("--ro-bind", pin, pin)
		}
		for _, w := range r.writeRoots {
			if !r.isTmp(w) {
				r.at('w', w).add("--bind", w, w)
			}
		}
	} else {
		// A writable "/" would bury pins made before it: pin after the
		// write roots, then cover each pinned top-level directory with a
		// writable bind of itself (docs/reference.md#write-roots).
		for _, w := range r.writeRoots {
			if !r.isTmp(w) {
				r.at('w', w).add("--bind", w, w)
			}
		}
		covers := map[string]bool{}
		for _, pin := range pins {
			r.at('p', pin).add("--ro-bind", pin, pin)
			top := "/" + strings.SplitN(strings.TrimPrefix(pin, "/"), "/", 2)[0]
			covers[top] = true
		}
		for _, top := range sortedKeys(covers) {
			if top != "/proc" && top != "/dev" && top != "/sys" {
				r.at('w', "/").add("--bind", top, top)
			}
		}
	}
	if r.tmp != nil {
		r.add("--bind", r.tmp.src, r.tmp.dest)
	}
	for _, u := range r.readDeny {
		if r.hiddenByEarlier(u) {
			continue
		}
		r.emitDeny(u, false)
	}
	for _, m := range r.masks {
		r.at('m', m.dest).add("--ro-bind", m.src, m.dest)
	}
	for _, m := range denyBinds {
		if r.masked(m.dest) {
			continue
		}
		if r.hiddenUnrestored(m.dest) {
			// What the read deny restored writable below it must still
			// become read-only.
			for _, w := range r.writeRoots {
				if w != m.dest && within(w, m.dest) && r.restoredUnder(w, m.dest) {
					r.at('x', m.dest).add("--ro-bind", r.host(w), w)
				}
			}
			continue
		}
		r.at('x', m.dest).add("--ro-bind", m.src, m.dest)
	}
	// A read-only bind of a directory re-exposes what was hidden below it.
	for _, u := range r.readDeny {
		for _, m := range denyBinds {
			if u.path != m.dest && within(u.path, m.dest) {
				r.emitDeny(u, true)
				break
			}
		}
	}
	if r.usedEmpty {
		r.cur = 0 // the runtime's own placeholder source
		r.add("--ro-bind", r.h.EmptyDir, r.h.EmptyDir)
	}
}

// masked reports whether p is a masked file's landing (a read-only bind
// already).
func (r *resolver) masked(p string) bool {
	for _, m := range r.masks {
		if m.dest == p {
			return true
		}
	}
	return false
}

// emitDeny hides u and restores what read and write allows name inside it;
// again marks a re-application, where every restore is read-only.
func (r *resolver) emitDeny(u denyUnit, again bool) {
	if !u.dir {
		r.at('d', u.path).add("--ro-bind", "/dev/null", u.path)
		return
	}
	r.at('d', u.path).add("--tmpfs", u.path)
	if u.standIn {
		return
	}
	type restore struct {
		src, dest string
		writable  bool
		kind      byte
	}
	var restores []restore
	for _, w := range r.writeRoots {
		if w != u.path && within(w, u.path) {
			restores = append(restores, restore{r.host(w), w, !again, 'w'})
		}
	}
	for _, a := range r.allowRead {
		if a == u.path || !within(a, u.path) {
			continue
		}
		src, err := filepath.EvalSymlinks(a)
		if err != nil || !within(src, u.path) {
			continue // resolves to nothing, or outside what it reopens
		}
		if r.deniedInside(src, u) {
			continue // a more specific deny wins
		}
		restores = append(restores, restore{src, a, false, 'a'})
	}
	// Shallow first, so that deeper restores are not covered; at the same
	// place the writable one last, so that a read allow does not take a
	// write allow away.
	sort.SliceStable(restores, func(i, j int) bool {
		if di, dj := depth(restores[i].dest), depth(restores[j].dest); di != dj {
			return di < dj
		}
		return !restores[i].writable && restores[j].writable
	})
	for _, rs := range restores {
		r.at(rs.kind, rs.dest)
		if rs.writable {
			r.add("--bind", rs.src, rs.dest)
		} else {
			r.add("--ro-bind", rs.src, rs.dest)
		}
	}
}

// deniedInside reports whether another read deny, more specific than u,
// covers p.
func (r *resolver) deniedInside(p string, u denyUnit) bool {
	for _, v := range r.readDeny {
		if v.path != u.path && within(v.path, u.path) && within(p, v.path) {
			return true
		}
	}
	return false
}

// hiddenByEarlier reports whether u lies under a shallower tmpfs and no
// restore of it reaches u.
func (r *resolver) hiddenByEarlier(u denyUnit) bool {
	for _, v := range r.readDeny {
		if v.path == u.path {
			return false
		}
		if v.dir && within(u.path, v.path) && !r.restoredUnder(u.path, v.path) {
			return true
		}
	}
	return false
}

// restoredUnder reports whether a restore of the tmpfs at landing brings p
// back.
func (r *resolver) restoredUnder(p, landing string) bool {
	for _, w := range r.writeRoots {
		if within(p, w) && within(w, landing) && w != landing {
			return true
		}
	}
	for _, a := range r.allowRead {
		if within(p, a) && within(a, landing) && a != landing {
			return true
		}
	}
	return false
}

// hiddenUnrestored reports whether p is under a read-deny tmpfs that no
// restore brings back: a write deny there has nothing to protect.
func (r *resolver) hiddenUnrestored(p string) bool {
	for _, u := range r.readDeny {
		if p == u.path {
			// Hidden already; binding the real path here would show what
			// the read deny hides.
			return true
		}
		if u.dir && within(p, u.path) && !r.restoredUnder(p, u.path) {
			return true
		}
	}
	return false
}

type mount struct{ src, dest string }

// isTmp reports whether p is where the run's TMPDIR is bound.
func (r *resolver) isTmp(p string) bool { return r.tmp != nil && p == r.tmp.dest }

// host returns the host path behind p: inside the run's TMPDIR, its
// directory on the host; anywhere else, p.
func (r *resolver) host(p string) string {
	if r.tmp != nil && within(p, r.tmp.dest) {
		return r.tmp.src + strings.TrimPrefix(p, r.tmp.dest)
	}
	return p
}

// denyWriteMounts decides the read-only mounts of the write denies: an
// existing path inside (or above) a write root is bound onto itself; an
// absent one gets a placeholder at its first missing component.
func (r *resolver) denyWriteMounts() []mount {
	var out []mount
	seen := map[string]bool{}
	addMount := func(m mount) {
		if !seen[m.dest] {
			seen[m.dest] = true
			out = append(out, m)
		}
	}
	// Existing destinations are bound read-only over everything before
	// them, so nothing below them needs a placeholder.
	var readOnly []string
	for _, d := range r.denyWrite {
		if _, err := os.Lstat(r.host(d)); err == nil {
			readOnly = append(readOnly, d)
		}
	}
	effectivelyWritable := func(p string) bool {
		for _, d := range readOnly {
			if within(p, d) {
				return false
			}
		}
		return r.writable(p)
	}
	for _, d := range r.denyWrite {
		above := false
		for _, w := range r.writeRoots {
			if within(w, d) {
				above = true
			}
		}
		if !r.writable(d) && !above {
			continue // read-only already
		}
		if _, err := os.Lstat(r.host(d)); err == nil {
			addMount(mount{r.host(d), d})
			continue
		}
		// Absent: keep it from being created.
		existing, missing := d, ""
		for {
			if _, err := os.Lstat(r.host(existing)); err == nil {
				break
			}
			missing = filepath.Base(existing)
			existing = filepath.Dir(existing)
		}
		first := filepath.Join(existing, missing)
		if fi, err := os.Stat(r.host(existing)); err == nil && !fi.IsDir() {
			if l, ok := r.from["x"+d]; ok {
				if _, ok := r.from["x"+existing]; !ok {
					r.from["x"+existing] = l
				}
			}
			addMount(mount{r.host(existing), existing}) // e.g. a worktree's .git file
			continue
		}
		if !effectivelyWritable(first) {
			r.note("%s: needs no placeholder, its directory is read-only in the sandbox", d)
			continue
		}
		if !canCreateIn(r.host(existing)) {
			// Neither bubblewrap nor the command can create it there
			// (another owner, a read-only file system): nothing to do, and
			// a mount point could not be made.
			r.note("%s: needs no placeholder, %s does not let this user create it", d, existing)
			continue
		}
		// An empty read-only directory keeps the name from being created
		// (as a file or a directory) and is what tools that walk the tree
		// pass over: git adds no empty directory, where a /dev/null
		// character device makes "git add -A" fail.
		src := "/dev/null"
		if r.h.EmptyDir == "" {
			r.note("%s: no empty directory to protect %s with; protecting it with /dev/null", d, first)
		} else {
			src = r.h.EmptyDir
			r.usedEmpty = true
		}
		if !seen[first] && r.host(first) == first {
			// (One in the run's TMPDIR goes with it.)
			r.res.Placeholders = append(r.res.Placeholders, first)
		}
		if l, ok := r.from["x"+d]; ok {
			if _, ok := r.from["x"+first]; !ok {
				r.from["x"+first] = l
			}
		}
		addMount(mount{src, first})
	}
	return out
}

// pins returns the existing directories strictly between each protected
// path and the write root above it, shallow first: as mount points they
// cannot be renamed or removed (EBUSY), so "mv .git x" cannot move a
// protected path out of the way.
func (r *resolver) pins(protected []string) []string {
	set := map[string]bool{}
	for _, p := range protected {
		for _, w := range r.writeRoots {
			if p == w || !within(p, w) {
				continue
			}
			for d := filepath.Dir(p); d != w && within(d, w); d = filepath.Dir(d) {
				if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
					set[d] = true
					r.pinFrom(d, p)
				}
			}
		}
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if depth(out[i]) != depth(out[j]) {
			return depth(out[i]) < depth(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// pinFrom attributes pin to the step behind the protected path p.
func (r *resolver) pinFrom(pin, p string) {
	if _, ok := r.from["p"+pin]; ok {
		return
	}
	for _, k := range []string{"d", "x", "m"} {
		if l, ok := r.from[k+p]; ok {
			r.from["p"+pin] = l
			return
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// within reports whether p is base or below it.
func within(p, base string) bool {
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

func depth(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }
