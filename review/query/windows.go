package query

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"srt.dev/compiler/policy"
)

// The Windows answers compare paths the way NTFS and the ACL helper do,
// which the agreement test of emit/wfp (interpreting windows/plan.json)
// showed the POSIX comparisons getting wrong:
//
//   - names compare ignoring case: a deny on C:\proj\.env is a deny on
//     C:\PROJ\.ENV, one file;
//   - C:/ is a root that covers C:/x (the POSIX walk stopped at "C:");
//   - the parent of C:/x is C:/, and C:/ and //server/share have none;
//   - a policy from the Windows reading has ${HOMEDRIVE} and
//     ${HOMEPATH} roots, which Options.Home fills in too.
//
// These apply only on the Windows target.

// windows is the ACL plan of windows/plan.json (emit/wfp): deny ACEs for
// read denies and credential files, allow ACEs for grants, a
// write-restricted token that writes only where a root's grant names it,
// and WFP filters for the network.
type windows struct{ *Evaluator }

func (w windows) target() Target { return Windows }

// keys files a rule as covers compares it: case folded, a drive root
// under its drive ("c:"), a literal entry with * or ? nowhere (it covers
// nothing).
func (w windows) keys(r policy.PathRule, _ bool) ([]keyed, bool) {
	p := w.expand(r.Path)
	has := strings.ContainsAny(p, "*?")
	if r.Literal && has {
		return nil, true
	}
	p = strings.ToLower(p)
	if !(r.Pattern && has) {
		if len(p) == 3 && strings.HasSuffix(p, ":/") {
			p = p[:2]
		}
		return []keyed{{key: p}}, true
	}
	return patternKey(0, p, 0)
}

func (w windows) forms(p string) []string { return []string{strings.ToLower(p)} }

func (w windows) covers(r policy.PathRule, p string) bool {
	rp := w.expand(r.Path)
	// Only * and ? make a pattern; [ and ] are then a set, otherwise
	// literal text. A literal entry with * or ? is skipped.
	has := strings.ContainsAny(rp, "*?")
	if r.Literal && has {
		return false
	}
	r.Pattern = r.Pattern && has
	return coversWindows(r, rp, p)
}

func (w windows) credentialRead(m policy.PathRule) Decision {
	return Decision{Rule: m.Origin, Why: "credential mask: " + string(Windows) + " cannot redirect a read, so the file is read-denied"}
}

func (w windows) read(p string) Decision { return w.readLayered(w, p) }

// unit is the nearest match of read deny d at or above p (see
// nearestMatch).
func (w windows) unit(d policy.PathRule, p string) string {
	var anc []string
	for a := p; a != ""; a = windowsDir(a) {
		anc = append(anc, a)
	}
	return w.nearestMatch(d, anc)
}

// restores: an explicit allow ACE strictly below the denied object comes
// before the inherited deny; on the object itself the deny comes first.
func (w windows) restores(a policy.PathRule, p, unit string) bool {
	return strictlyInside(strings.ToLower(w.at(a, p)), strings.ToLower(unit))
}

// lifter: no allow ACE lifts a deny ACE on the same object.
func (w windows) lifter(string) (policy.PathRule, bool) { return policy.PathRule{}, false }

// sealed: the helper drops a read grant or write root at or under a
// credential deny (docs/reference.md#windows-session).
func (w windows) sealed(d policy.PathRule) bool { return isCredential(d) }

func (w windows) denyWhy(d policy.PathRule) string {
	why := "hidden by a read deny"
	if d.Pattern && strings.ContainsAny(d.Path.Rel(), "*?") {
		why += " (a glob: expanded at initialize; files created later are not covered)"
	}
	return why
}

func (w windows) readableWhy() string {
	return "no deny ACE: readable where the host's ACLs let the sandbox account read (the user's profile only after the profile grant)"
}

func (w windows) trailingSeparator() string {
	return "written with a trailing /: Windows drops it and grants each match the glob expands to at initialize"
}

func (w windows) everything() string { return "/" }

func (w windows) extraWrites() []Line { return nil }

func (w windows) listsWrite(policy.PathRule) bool { return true }

// mandatoryBelowWhy: Windows has no mandatory write denies, so the
// summary has no line for them.
func (w windows) mandatoryBelowWhy() (string, bool) { return "", false }

func (w windows) knobs() []knob {
	// The WFP filters act on connects (ALE_AUTH_CONNECT), not on
	// listening: what allowLocalBinding changes is whether the
	// command reaches loopback ports outside the proxy range. The
	// agreement test of emit/wfp checks the verdict against the
	// plan's filters.
	return []knob{w.sw(localBindingName, "network.allowLocalBinding", w.p.Network.AllowLocalBinding,
		"the command may connect to every loopback port but 1 (the machine's filters were installed with --allow-loopback)",
		"the WFP filters block the command's loopback connects outside the proxy port range (listening is not filtered, but nothing in the sandbox can connect to it)")}
}

// windowsDir returns the directory holding p, or "" when p is a root.
func windowsDir(p string) string {
	if len(p) == 3 && p[1] == ':' && p[2] == '/' {
		return "" // C:/
	}
	if strings.HasPrefix(p, "//") && strings.Count(p, "/") <= 3 {
		return "" // //server/share
	}
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0 || p == "/":
		return ""
	case i == 2 && p[1] == ':':
		return p[:3] // C:/x → C:/
	case i == 0:
		return "/"
	}
	return p[:i]
}

// coversWindows is policy.PathRule.Covers for the Windows target, with
// r's path as expand gives it, rp: names compare ignoring case (a drive
// root covers what lies on its drive, as every root does). A spelling
// that is no path covers, and is covered by, nothing.
func coversWindows(r policy.PathRule, rp, p string) bool {
	x, ok := foldPath(rp)
	q, qok := foldPath(p)
	if !ok || !qok {
		return false
	}
	r.Path = x
	return r.Covers(q)
}

// foldPath reads p (see asPath) with its names lower-cased; the root
// stays as it is (a drive letter is upper case in every policy path, and
// in what expandWindows makes of the options).
func foldPath(p string) (policy.Path, bool) {
	x, ok := asPath(p)
	if !ok {
		return policy.Path{}, false
	}
	return x.Root().Join(strings.ToLower(x.Rel())), true
}

// expandWindows is expand for a policy from the Windows reading: the
// options may spell directories with \ and a lower-case drive letter,
// and the %HOMEDRIVE% roots are filled in from Home (see
// policy.Path.Expand); a root the options name no directory for stays
// symbolic.
func (e *Evaluator) expandWindows(p policy.Path) string {
	if s, ok := p.Expand(optionsDir(e.opts.Home), optionsDir(e.opts.Cwd)); ok {
		return s
	}
	return p.String()
}

// optionsDir is a directory of the options in the form of the policy's
// paths: "/" separators, an upper-case drive letter.
func optionsDir(d string) string {
	d = strings.ReplaceAll(d, `\`, "/")
	if len(d) >= 2 && d[1] == ':' && 'a' <= d[0] && d[0] <= 'z' {
		d = strings.ToUpper(d[:1]) + d[1:]
	}
	return d
}

// windowsPath reads a path as a user writes it on Windows (C:\x, ~\x,
// %USERPROFILE%\x, \\server\share\x) into the policy's form.
func (e *Evaluator) windowsPath(spelling string) string {
	wp, err := policy.NormalizeWindows(spelling, true)
	if err != nil {
		// Not a Windows path at all: compare it as written.
		return spelling
	}
	return e.expand(wp.Path)
}

// nearestMatch is the unit of deny d on Windows: the nearest of anc (p
// first, then its ancestors) that d puts a deny ACE on. Every match of a
// pattern gets its own ACE, and on one object the deny comes before an
// allow (docs/reference.md#windows-aces), so an allow between two nested
// matches (C:/a/vendor/keep/vendor under **/vendor) reopens only down to
// the deeper match. Linux hides the shallowest match as one tmpfs. Found
// by the agreement test of emit/wfp.
func (e *Evaluator) nearestMatch(d policy.PathRule, anc []string) string {
	path := strings.ToLower(e.expand(d.Path))
	pattern := d.Pattern && strings.ContainsAny(path, "*?")
	for _, a := range anc {
		x := strings.ToLower(a)
		if pattern {
			if ok, err := doublestar.Match(policy.Doublestar(path), x); err == nil && ok {
				return a
			}
		} else if x == path {
			return a
		}
	}
	return anc[0]
}

// at is where grant a, which covers p, sits: its path, or for a pattern
// the nearest match at or above p, which is where its allow ACE
// is (the pattern's text lies inside nothing).
func (w windows) at(a policy.PathRule, p string) string {
	var anc []string
	for x := p; x != ""; x = windowsDir(x) {
		anc = append(anc, x)
	}
	return w.nearestMatch(a, anc)
}

func (w windows) write(p string) Decision {
	fs := &w.p.Filesystem
	if fs.Disabled {
		// The command still runs under the write-restricted token,
		// with no write root: nothing the settings name is writable
		// (docs/reference.md#windows-token, docs/reference.md#windows-cases W21).
		return Decision{Rule: w.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled, which on Windows means no write roots: the write-restricted token writes only where a root's grant names it (and in the sandbox account's own profile)"}
	}
	if d, ok := writeDenied(w, w.callerWriteDenies(), p); ok {
		return d
	}
	if m, ok := firstCovering(w, fs.CredentialMasks, p); ok {
		return Decision{Rule: m.Origin, Why: "credential file: a deny ACE of full access"}
	}
	var root *policy.PathRule
	for _, i := range covering(w, fs.AllowWrite, p, false) {
		a := fs.AllowWrite[i]
		if a.Origin == policy.Default {
			continue // the default write paths are /dev and /tmp names
		}
		if w.covers(a, p) {
			root = &a
			break
		}
	}
	if root == nil {
		return Decision{Rule: policy.Default, Why: noWriteRootWhy}
	}
	// A read deny is a deny ACE of full access, writes included (the
	// stricter reading; not verified on Windows), unless a write root
	// at or inside the deny restores it.
	if hiding := w.hiddenFromWrite(w, p); hiding != nil {
		return Decision{Rule: hiding.Origin, Why: "a read deny is a deny ACE of full access, writes included (the stricter reading; not verified on Windows)"}
	}
	why := rootWhy(*root)
	if w.dangerousName(p) {
		why += "; Windows has no mandatory write denies (list it in filesystem.denyWrite)"
	}
	return Decision{Allow: true, Rule: root.Origin, Why: why}
}

// callerWriteDenies are the write denies of the Windows plan: the
// settings' own. Windows has no mandatory write denies
// (docs/reference.md#windows-session: the session's denyWrite list is
// the settings' own; the reference adds none, and windows/plan.json lists
// that as a residual risk), whichever reading the policy comes from: a
// portable file explained with the POSIX reading must answer for Windows
// as its Windows plan enforces (emit/wfp's TestAgreePortable checks it).
func (w windows) callerWriteDenies() []policy.PathRule {
	return w.derived("callerWriteDenies", func() []policy.PathRule {
		var out []policy.PathRule
		for _, r := range w.p.Filesystem.DenyWrite {
			if r.Origin != policy.Mandatory {
				out = append(out, r)
			}
		}
		return out
	})
}

func (w windows) remove(p string) Decision { return w.write(p) }

// unixSocket: Windows does not filter AF_UNIX sockets; the socket file's
// ACL decides, as for a write.
func (w windows) unixSocket(p string) Decision {
	d := w.write(p)
	d.Why = "Windows does not filter AF_UNIX sockets; connecting needs write access to the socket file: " + d.Why + " (not verified on Windows)"
	return d
}

// dangerousName reports whether p is, or lies in, one of the names Linux
// and macOS protect in the working directory (policy.MandatoryFiles and
// MandatoryDirs, and the git names: .git/hooks, .git/config, ...), so that a Windows answer
// can say that nothing protects it there.
func (e *Evaluator) dangerousName(p string) bool {
	names := append(append([]string{}, policy.MandatoryFiles...), policy.MandatoryDirs...)
	for _, n := range append(append(append([]string{}, policy.GitDirs...), policy.GitFiles...), policy.GitConfigFiles...) {
		names = append(names, ".git/"+n)
	}
	for _, n := range names {
		if coversWindows(policy.PathRule{}, e.expand(policy.Cwd.Join(n)), p) {
			return true
		}
	}
	return false
}
