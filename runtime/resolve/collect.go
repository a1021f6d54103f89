package resolve

// What the plan's file-system steps name on this host: the write roots,
// read denies and allows, masks and write denies, each checked against
// what exists (symlinks, missing paths, globs expanded).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/runtime/nofollow"
)

// targets returns the host paths a path step names: the path itself, and
// for a pattern every existing match as well (the dual reading).
func (r *resolver) targets(s bwrap.Step) ([]string, error) {
	p, err := r.expand(s.Operand)
	if err != nil {
		return nil, fmt.Errorf("@%s %w", s.Name(), err)
	}
	if s.Qualifier != bwrap.Pattern {
		return []string{p}, nil
	}
	// The directory behind ${HOME} or ${CWD} is a name, whatever
	// characters it has: only the rest of the operand is a pattern.
	root, rel := "", s.Operand
	if sp, err := policy.ParsePath(s.Operand); err == nil && sp.Root().Symbolic() && sp.Rel() != "" {
		if dir, ok := sp.Root().Path().Expand(r.h.Home, r.h.Cwd); ok { // as expand found
			root, rel = filepath.Clean(dir), sp.Rel()
		}
	}
	matches, err := glob(root, rel)
	if err != nil {
		return nil, fmt.Errorf("@%s %s: %w", s.Name(), s.Operand, err)
	}
	if _, err := r.lstat(p); err == nil {
		matches = append([]string{p}, matches...)
	}
	return matches, nil
}

// collect gathers the file-system steps.
func (r *resolver) collect(steps []bwrap.Step) error {
	for _, s := range steps {
		if len(s.Args) == 3 && s.Args[0] == "--bind" && s.Args[1] == "/" && s.Args[2] == "/" {
			// Everything is writable (the file system policy disabled):
			// "/" is a write root the plan binds itself.
			r.rootBound = true
			r.writeRoots = append(r.writeRoots, "/")
		}
	}
	var convenience []string
	scanLine := 0
	convLine := map[string]int{}
	for _, s := range steps {
		if s.Directive == bwrap.PrivateTmp {
			if r.h.TmpDir == "" {
				return fmt.Errorf("@%s %s: no directory was made for the run's TMPDIR", s.Directive, s.Operand)
			}
			r.tmp = &mount{src: r.h.TmpDir, dest: filepath.Clean(s.Operand)}
			r.from["w"+r.tmp.dest] = s.Line
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
				var le *nofollow.LinkError
				if err := r.addWriteRoot(t); errors.As(err, &le) {
					return rootLinkError(s, le)
				}
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
				if err := r.addMask(s.Operand, t); err != nil {
					return err
				}
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
		var le *nofollow.LinkError
		if err := r.addWriteRoot(c); errors.As(err, &le) {
			// A default, not the settings' words: left out, loudly.
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%v: not writable in the sandbox (srt binds no write root through a symbolic link, which a sandboxed command could have planted)", le))
		}
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
	if err := r.collectGitHost(steps); err != nil {
		return err
	}
	return r.collectState(steps)
}

// collectState applies the rules of srt's own files (policy.SrtState):
// every kind, whether the plan has its @srt-state step or not, after
// every allow, which none of them can lift.
func (r *resolver) collectState(steps []bwrap.Step) error {
	r.cur = 0
	for _, s := range steps {
		if s.Directive == bwrap.SrtState {
			r.cur = s.Line
		}
	}
	for _, rule := range policy.SrtState {
		for _, p := range r.h.State[rule.Kind] {
			p = filepath.Clean(p)
			if !filepath.IsAbs(p) {
				return fmt.Errorf("resolve: srt's own %s %q is not an absolute path", rule.Kind, p)
			}
			if rule.Hidden {
				r.addHidden(p)
				continue
			}
			if _, err := r.lstat(p); err != nil {
				if r.writable(filepath.Dir(r.realOf(p))) {
					r.res.Watch = append(r.res.Watch, p)
				}
				continue
			}
			if err := r.addDenyWrite(p); err != nil {
				return fmt.Errorf("%w (it is srt's own %s: %s)", err, rule.Kind, rule.Why)
			}
		}
	}
	return nil
}

// addHidden hides p whatever allows name it or what is inside it: no
// read allow lifts it, nothing is restored below it.
func (r *resolver) addHidden(p string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return // absent: nothing to hide
	}
	fi, err := r.stat(real)
	if err != nil {
		return
	}
	r.mark('d', real)
	for i, u := range r.readDeny {
		if u.path == real {
			r.readDeny[i].standIn = true
			return
		}
	}
	r.readDeny = append(r.readDeny, denyUnit{path: real, dir: fi.IsDir(), standIn: true})
	sort.SliceStable(r.readDeny, func(i, j int) bool { return depth(r.readDeny[i].path) < depth(r.readDeny[j].path) })
}

// addWriteRoot adds an allow-write path if it exists and is not a
// device. The home or working directory it lies in is taken as the host
// has it (the caller's own, see anchored); every component below it, and
// every component of a path outside both, must be no symbolic link: a
// sandboxed command can plant one (node_modules made a link to the home)
// to have a later run bind what it leads to. Such a root is a
// *nofollow.LinkError; the caller refuses the run, or, for a default
// root, leaves it out with a warning. The root is opened here, without
// following a link, and bubblewrap binds that object (bindSource), not
// whatever its name leads to when bubblewrap looks it up.
func (r *resolver) addWriteRoot(p string) error {
	real, f, err := r.writeRoot(p)
	if f == nil {
		return err
	}
	r.mark('w', real)
	if slices.Contains(r.writeRoots, real) {
		f.Close()
		return nil
	}
	r.writeRoots = append(r.writeRoots, real)
	r.rootFiles[real] = f
	return nil
}

// writeRoot reads a write root p as both layers do (addWriteRoot, and
// the second layer's @landlock-write): its real path and the object
// opened without following a link; no file, with a note saying why, when
// p makes nothing writable; a *nofollow.LinkError when it is reached
// through a link.
func (r *resolver) writeRoot(p string) (string, *os.File, error) {
	if p == "/dev" || strings.HasPrefix(p, "/dev/") {
		return "", nil, nil // --dev /dev provides the devices
	}
	real := r.anchored(p)
	f, err := nofollow.Open(real)
	var le *nofollow.LinkError
	switch {
	case errors.As(err, &le):
		return "", nil, le
	case errors.Is(err, fs.ErrNotExist):
		r.note("%s: not writable, it does not exist", p)
		return "", nil, nil
	case err != nil:
		r.note("%s: not writable, it cannot be opened: %v", p, err)
		return "", nil, nil
	}
	if r.tmp != nil && (within(p, r.tmp.dest) || within(real, r.tmp.dest)) {
		f.Close()
		r.note("%s: the sandbox's %s is the run's own TMPDIR, writable already; the host's is not bound", p, r.tmp.dest)
		return "", nil, nil
	}
	return real, f, nil
}

// anchored is p with the home or working directory it lies in (the
// deeper, when both) replaced by that directory's real path: they are the
// caller's, chosen before srt runs, and may be reached through links of
// the host's (/home a link to /data).
func (r *resolver) anchored(p string) string {
	anchor := ""
	for _, a := range []string{r.h.Home, r.h.Cwd} {
		if a != "" && within(p, a) && len(a) > len(anchor) {
			anchor = a
		}
	}
	if anchor == "" {
		return p
	}
	real, ok := r.realAnchor[anchor]
	if !ok {
		var err error
		if real, err = filepath.EvalSymlinks(anchor); err != nil {
			real = anchor
		}
		r.realAnchor[anchor] = real
	}
	return filepath.Join(real, strings.TrimPrefix(p, anchor))
}

// rootLinkError is the error of a write root the plan asks for that is
// reached through a symbolic link.
func rootLinkError(s bwrap.Step, le *nofollow.LinkError) error {
	from := "@" + s.Name() + " " + s.Operand
	if s.Origin != nil {
		from = strings.TrimSpace(s.Origin.Key + " " + s.Origin.Pos)
	}
	return stepError(s, fmt.Errorf("%s: the write root %v: srt binds no write root through a symbolic link, which a sandboxed command could have planted to widen a later run; remove the link, or write the path it leads to", from, le))
}

// addReadDeny hides p where it really is.
func (r *resolver) addReadDeny(p string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		_, lerr := r.lstat(p)
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
	fi, err := r.stat(real)
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
		if fi, err := r.stat(d); err == nil && fi.IsDir() {
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
func (r *resolver) addMask(operand, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil // absent: nothing to mask
	}
	if fi, err := r.stat(real); err != nil || fi.IsDir() {
		r.note("%s: a directory cannot be masked; hidden instead", p)
		r.addReadDeny(p)
		return nil
	}
	if r.h.MaskedCopy == nil {
		r.note("%s: no masked copy available; hidden instead", p)
		r.addReadDeny(p)
		return nil
	}
	copyPath, err := r.h.MaskedCopy(operand, real)
	r.forget() // the copy, and its directory, are new on the host
	var stop *StopError
	switch {
	case errors.As(err, &stop):
		return stop
	case err != nil:
		r.note("%s: masking failed (%v); hidden instead", p, err)
		r.addReadDeny(p)
	case copyPath == "":
		r.note("%s: nothing to mask; left as it is", p)
	default:
		r.mark('m', real)
		r.masks = append(r.masks, mount{copyPath, real})
	}
	return nil
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
		fi, err := r.lstat(prefix)
		if err == nil && fi.Mode()&os.ModeSymlink != 0 && r.writable(filepath.Dir(prefix)) {
			return fmt.Errorf("resolve: %s is write-protected, but %s on its way is a symlink in a writable directory, which the sandboxed command could replace; list the real path, or remove the link", p, prefix)
		}
	}
	real := r.realOf(p)
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

// writable reports whether p is at or below one of the write roots.
func (r *resolver) writable(p string) bool {
	for _, w := range r.writeRoots {
		if within(p, w) {
			return true
		}
	}
	return false
}
