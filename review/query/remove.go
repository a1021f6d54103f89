package query

import (
	"slices"
	"strings"

	"srt.dev/compiler/policy"
)

// Remove answers whether the command can remove or rename the host's file
// or directory at p (a path as Path returns it) on target t: unlink it from
// its directory, with the change reaching the host.
//
// On macOS this is more than a write: the profile keeps protected paths
// and the directories above them from being moved away
// (docs/reference.md#macos-reads step 7, #macos-unlink-rule), so that a
// denied file cannot be renamed to a name no deny matches:
//
//   - the base directory of every write deny (mandatory ones included:
//     the working directory, ${CWD}/.git, ${CWD}/.claude) and each of its
//     ancestors cannot be removed or renamed;
//   - inside a write root, a read-denied path cannot be removed (unless
//     an allow the deny covers carves it out: docs/reference.md#macos-reads step 4 "covers",
//     decided with this host's directories), nor can the base directory
//     of a read deny and its ancestors that lie inside a write root or
//     are one. The reference pins only those strictly inside a root:
//     srt also pins a write root that holds a read deny, since renaming
//     the root into another write root (/tmp/claude is always one) would
//     carry the denied files out of the deny's reach, and a directory a
//     pattern write root names.
//
// Where the profile cannot know the host, it is stricter than the
// reference, and so is Remove: a read deny and a write root written from
// different roots (${HOME}, ${CWD}, "/") are taken to lie one inside the
// other; an absolute deny with ".." also pins the directories of its
// unfolded spelling.
//
// On Linux and Windows the answer is Write's: what can be changed can be
// removed, except that Linux mount points (a protected leaf and the
// directories between it and its write root) refuse rename and rmdir with
// EBUSY, which Remove does not model.
func (e *Evaluator) Remove(p string, t Target) Decision { return e.on(t).remove(p) }

// remove answers a removal on macOS: a write the unlink rules also allow.
func (m macOS) remove(p string) Decision {
	e := m.Evaluator
	w := m.write(p)
	if !w.Allow {
		return w
	}
	fs := &e.p.Filesystem
	mp := macPath(p)
	if mp == "/" {
		return w // pins stop below "/" (docs/reference.md#macos-reads step 7)
	}
	for _, d := range e.writeDenyBases() {
		if d.base == mp || strictlyInside(d.base, mp) {
			return Decision{Rule: d.origin, Why: "holds a write-protected path: the directory and those above it cannot be removed or renamed"}
		}
	}
	if fs.Disabled {
		return w // no write section, no unlink rules
	}
	var denies []policy.PathRule
	denies = append(denies, fs.DenyRead...)
	denies = append(denies, fs.CredentialMasks...)
	for _, d := range denies {
		cred := isCredential(d)
		// Where the deny and a write root are written from different
		// roots, the profile cannot tell whether one lies in the other:
		// it assumes so (stricter).
		cross := e.crossRootWrite(d)
		for _, x := range e.macEntries(d, false) {
			if !cred && !cross && !e.inRoots(x) {
				continue // the last rule leaves it out (docs/reference.md#macos-unlink-rule)
			}
			if x.match(mp, true) && !e.macCarved(d, p) {
				return Decision{Rule: d.Origin, Why: "read-denied inside a write root: it may be changed but not removed or renamed (a renamed copy would be readable)"}
			}
			bases := []string{macBase(x)}
			if u := e.macUnfolded(d); u != "" {
				bases = append(bases, u)
			}
			for _, base := range bases {
				if (base == mp && x.pat != "" || strictlyInside(base, mp)) && (e.inWriteRoot(mp) || cross) {
					return Decision{Rule: d.Origin, Why: "holds a read-denied path inside a write root: it cannot be removed or renamed (that would carry the denied files out of the deny's reach)"}
				}
			}
		}
	}
	return w
}

// crossRootWrite reports whether a write root the settings wrote starts at
// another symbolic root (${HOME}, ${CWD}, "/") than d, so that the profile
// cannot tell whether d lies inside it. A deny of "/" lies inside nothing.
func (e *Evaluator) crossRootWrite(d policy.PathRule) bool {
	if d.Path == policy.Abs.Path() {
		return false
	}
	for _, a := range e.macWriteRoots() {
		if a.Origin != policy.Default && !sameRoot(a.Path, d.Path) && !a.TrailingSeparator {
			return true
		}
	}
	return false
}

// macUnfolded is where the spelling of d with ".." as written starts on
// macOS (a literal path itself, a pattern's base directory), which the
// profile also carries and pins the directories of, or "" when d has no
// "..". The reference keeps such a spelling where it cannot resolve it
// (the path does not exist, or resolving it climbs to an ancestor of the
// spelling, as a pattern's "/opt/a/.." does) and pins its directories.
func (e *Evaluator) macUnfolded(d policy.PathRule) string {
	if !strings.Contains(d.Path.String()+"/", "/../") {
		return ""
	}
	root, p := rootOf(d.Path)
	if root != "" {
		root = strings.TrimSuffix(e.expand(d.Path.Root().Path()), "/")
	}
	if d.Pattern && !d.Literal {
		return macPath(macBase(macEntry{lit: root, pat: p}))
	}
	return macPath(root + p)
}

// inRoots reports whether a read deny's entry meets a write root, so that
// the last rule of the profile (docs/reference.md#macos-unlink-rule) keeps it: a pattern whose base
// directory is at, inside or above a literal root, or any pattern root; a
// literal path strictly inside a literal root, or matched by a pattern
// root.
func (e *Evaluator) inRoots(x macEntry) bool {
	for _, a := range e.macWriteRoots() {
		for _, r := range e.macEntries(a, true) {
			if r.dirs {
				continue // matches nothing
			}
			switch {
			case x.pat != "" && r.pat != "":
				return true
			case x.pat != "":
				b := macBase(x)
				if b == r.lit || strictlyInside(b, r.lit) || strictlyInside(r.lit, b) {
					return true
				}
			case r.pat != "":
				if r.match(x.lit, false) {
					return true
				}
			case strictlyInside(x.lit, r.lit):
				return true
			}
		}
	}
	return false
}

// macCarved reports whether p, covered by read deny d, is carved out of
// d's unlink protection by an allowRead or a write root that d covers
// (docs/reference.md#macos-reads step 4, #macos-unlink-rule). Credential denies are never carved.
func (e *Evaluator) macCarved(d policy.PathRule, p string) bool {
	if isCredential(d) {
		return false
	}
	fs := &e.p.Filesystem
	for i, l := range [][]policy.PathRule{fs.AllowRead, e.macWriteRoots()} {
		for _, a := range l {
			if !e.macAllows(a, p, []macList{macReads, macWrites}[i]) || a.Convenience && !sameRoot(a.Path, d.Path) {
				// A convenience root a deny from another root covers is
				// one the reference drops: nothing to carve.
				continue
			}
			if d.Pattern && !d.Literal {
				if e.macCovers(d, e.macSample(a)) {
					return true
				}
				continue
			}
			// A literal deny: carved by what lies strictly inside it.
			if strictlyInside(macPath(e.macSample(a)), e.macEntries(d, false)[0].lit) {
				return true
			}
		}
	}
	return false
}

// inWriteRoot reports whether p (a macOS path) is a write root or lies
// inside one.
func (e *Evaluator) inWriteRoot(p string) bool {
	for _, a := range e.macWriteRoots() {
		if e.macAllows(a, p, macWrites) {
			return true
		}
	}
	return false
}

// macWriteRoots are the write roots of the profile on this host: the
// allowWrite rules without the convenience roots a read deny hides here.
func (e *Evaluator) macWriteRoots() []policy.PathRule {
	roots := func() []policy.PathRule {
		var out []policy.PathRule
		for _, a := range e.p.Filesystem.AllowWrite {
			if !e.macDropped(a) {
				out = append(out, a)
			}
		}
		return out
	}
	if e.opts.Exists != nil {
		return roots() // what exists may change between questions
	}
	return e.derived("macWriteRoots", roots)
}

// macDropped reports whether a is a default convenience write root
// (~/.npm/_logs, ~/.claude/debug) that the reference drops on this host: a
// read deny covers it, and no literal read allow inside that deny covers
// it again (docs/reference.md#default-writable). The compiler drops it
// where the spellings decide it (a pattern allow reopens it there, as on
// Linux); the profile asks the runtime for the rest.
func (e *Evaluator) macDropped(a policy.PathRule) bool {
	if !a.Convenience {
		return false
	}
	p := e.expand(a.Path)
	fs := &e.p.Filesystem
	mac := macOS{e}
	for _, i := range covering(mac, fs.DenyRead, p, false) {
		d := fs.DenyRead[i]
		if !e.macCovers(d, p) {
			continue
		}
		reopened := false
		for _, j := range covering(mac, fs.AllowRead, p, false) {
			r := fs.AllowRead[j]
			if r.Pattern && !r.Literal || r.TrailingSeparator {
				continue // only a literal allow reopens it
			}
			if e.macApplies(r, macReads) && e.macCovers(r, p) && e.macCovers(d, e.macSample(r)) {
				reopened = true
			}
		}
		if !reopened {
			return true
		}
	}
	return false
}

// A pinned is a directory whose removal the profile refuses, and the rule
// that protects something below it.
type pinned struct {
	base   string
	origin policy.Origin
}

// writeDenyBases are the base directories of the write denies on macOS:
// each caller denyWrite entry's (its path, or a pattern's directory before
// its first wildcard), git's files outside the repository in the home
// directory, and the mandatory names' in the working directory.
func (e *Evaluator) writeDenyBases() []pinned {
	var out []pinned
	for _, d := range append(slices.Clone(e.p.Filesystem.DenyWrite), e.gitHostRules()...) {
		for _, x := range e.macEntries(d, false) {
			out = append(out, pinned{macBase(x), d.Origin})
		}
		if u := e.macUnfolded(d); u != "" {
			out = append(out, pinned{u, d.Origin})
		}
	}
	if sc := e.p.Filesystem.MandatoryScan; sc != nil {
		// The patterns CWD/**/NAME start at the working directory;
		// .git/hooks (and .git/config) are protected there too.
		cwd, hooks := macPath(e.expand(policy.Cwd.Path())), macPath(e.expand(policy.Cwd.Join(".git/hooks")))
		out = append(out, pinned{cwd, sc.Origin}, pinned{hooks, sc.Origin})
	}
	return out
}

// macBase is the directory an entry starts in: a literal path itself, a
// pattern's text up to the component of its first wildcard.
func macBase(x macEntry) string {
	if x.pat == "" {
		return x.lit
	}
	static := x.pat
	if i := strings.IndexAny(static, "*?["); i >= 0 {
		static = static[:i]
	}
	dir := x.lit + static[:strings.LastIndexByte(static, '/')+1]
	if len(dir) > 1 {
		dir = strings.TrimSuffix(dir, "/")
	}
	if dir == "" {
		dir = "/"
	}
	return dir
}
