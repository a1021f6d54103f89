package resolve

// The file-system mounts, in the order bubblewrap applies them: the root,
// pins, write roots, read denies with what reopens them, masks, and the
// write denies with their placeholders.

import (
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// denyUnit is one hidden path: a tmpfs over a directory or /dev/null over
// anything else.
type denyUnit struct {
	path    string
	dir     bool
	standIn bool // hides more than asked, with nothing restored below
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
	// The directories on the way to git's files outside the repository
	// cannot be moved either: a file git reads there is watched, absent
	// or not, and a link put in place of a directory would move it.
	protected = append(protected, r.res.GitWatch...)
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
				r.at('w', w).add("--bind", r.bindSource(w), w)
			}
		}
	} else {
		// A writable "/" would bury pins made before it: pin after the
		// write roots, then cover each pinned top-level directory with a
		// writable bind of itself (docs/reference.md#write-roots).
		for _, w := range r.writeRoots {
			if !r.isTmp(w) && !(r.rootBound && w == "/") {
				r.at('w', w).add("--bind", r.bindSource(w), w)
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
		r.at('w', r.tmp.dest).add("--bind", r.tmp.src, r.tmp.dest)
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
	// The runtime's own placeholder sources, which no command may fill.
	if r.usedEmpty {
		r.cur = 0
		r.add("--ro-bind", r.h.EmptyDir, r.h.EmptyDir)
	}
	if r.usedFile {
		r.cur = 0
		r.add("--ro-bind", r.h.EmptyFile, r.h.EmptyFile)
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
			r.add("--bind", r.bindSource(rs.src), rs.dest)
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

// bindSource is what bubblewrap binds the write root w from: the
// descriptor addWriteRoot opened, as /proc/self/fd/N in bubblewrap
// (Host.BindFD), or w itself without one.
func (r *resolver) bindSource(w string) string {
	f := r.rootFiles[w]
	if r.h.BindFD <= 0 || f == nil {
		return w
	}
	i := slices.Index(r.res.BindFiles, f)
	if i < 0 {
		i = len(r.res.BindFiles)
		r.res.BindFiles = append(r.res.BindFiles, f)
	}
	return "/proc/self/fd/" + strconv.Itoa(r.h.BindFD+i)
}

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
		if _, err := r.lstat(r.host(d)); err == nil {
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
		if _, err := r.lstat(r.host(d)); err == nil {
			addMount(mount{r.host(d), d})
			continue
		}
		// Absent: keep it from being created.
		existing, missing := d, ""
		for {
			if _, err := r.lstat(r.host(existing)); err == nil {
				break
			}
			missing = filepath.Base(existing)
			existing = filepath.Dir(existing)
		}
		first := filepath.Join(existing, missing)
		if fi, err := r.stat(r.host(existing)); err == nil && !fi.IsDir() {
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
		if !canCreateIn(r.host(existing), r.rootNoCaps) {
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
		// One of git's own files (~/.gitconfig when the working
		// directory is the home) gets an empty file: git reads it, on the
		// host and in the sandbox, while the run lasts.
		src := "/dev/null"
		switch {
		case r.h.EmptyFile != "" && slices.Contains(r.h.GitHost, first):
			src = r.h.EmptyFile
			r.usedFile = true
		case r.h.EmptyDir == "":
			r.note("%s: no empty directory to protect %s with; protecting it with /dev/null", d, first)
		default:
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
	return r.coveredPlaceholders(out)
}

// coveredPlaceholders drops from mounts the placeholders that lie below
// another placeholder: the empty read-only directory above already keeps
// them from being created, and bubblewrap could not make their mount
// point inside it. The tree is looked at once per path, but another run
// of the same project may make a directory between two looks (its
// bubblewrap makes .claude while this run decides .claude/commands and
// .claude/agents), which would otherwise give both .claude and
// .claude/agents a placeholder.
func (r *resolver) coveredPlaceholders(mounts []mount) []mount {
	isPlaceholder := map[string]bool{}
	for _, p := range r.res.Placeholders {
		isPlaceholder[p] = true
	}
	covered := func(p string) bool {
		for q := range isPlaceholder {
			if q != p && within(p, q) {
				return true
			}
		}
		return false
	}
	out := mounts[:0]
	for _, m := range mounts {
		if isPlaceholder[m.dest] && covered(m.dest) {
			r.note("%s: needs no placeholder, one above it keeps it from being created", m.dest)
			continue
		}
		out = append(out, m)
	}
	kept := r.res.Placeholders[:0]
	for _, p := range r.res.Placeholders {
		if !covered(p) {
			kept = append(kept, p)
		}
	}
	r.res.Placeholders = kept
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
				if fi, err := r.lstat(d); err == nil && fi.IsDir() {
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
	for _, k := range []string{"d", "x", "m", "g"} {
		if l, ok := r.from[k+p]; ok {
			r.from["p"+pin] = l
			return
		}
	}
}
