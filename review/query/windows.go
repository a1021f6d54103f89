package query

import (
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/wfp"
)

// windows answers from the access-control program of windows/plan.json
// (emit/wfp: wfp.NewACL, evaluated by wfp.Bound.Access): deny ACEs for
// read denies and credential files, allow ACEs for grants, a
// write-restricted token that writes only where a root's grant names it.
// The verdict is the program's; this file names the settings entry an
// answer gives. keys, forms and covers compare paths as the program
// does (names ignoring case, C:/ a root that covers C:/x, the
// ${HOMEDRIVE} roots filled in from Options.Home), for what the targets
// share: the credential masks in Read and the indexes.
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

// read answers from the plan's access-control program (wfp.Bound.Read):
// the verdict is the program's; the answer names the most specific read
// deny that no grant nearer to p reopens, or the grant that reopens p
// inside a read deny (the first the settings list), or says that no deny
// entry applies.
func (w windows) read(p string) Decision {
	a := w.acl()
	d := a.b.Read(p)
	if !d.Allow {
		near := nearestGrant(d.Steps, false)
		if x := a.mostSpecific(d.Steps, near); x != nil {
			return Decision{Rule: x.Rule.Origin, Why: w.denyWhy(x.Rule)}
		}
		return a.decider(d)
	}
	first, level := a.firstDeny(d.Steps)
	if first == nil {
		return Decision{Allow: true, Rule: policy.Default, Why: "no deny ACE: readable where the host's ACLs let the sandbox account read (the user's profile only after the profile grant)"}
	}
	var by *wfp.Entry
	for _, s := range d.Steps {
		if k := s.Entry.Kind; s.Applied() && s.Level < level && (k == wfp.ReadGrant || k == wfp.WriteGrant) && a.before(s.Entry, by) {
			by = s.Entry
		}
	}
	if by == nil {
		return a.decider(d)
	}
	why := "reopened inside a read deny by this rule"
	if strings.HasPrefix(by.Rule.Origin.Key, "filesystem.allowWrite") {
		why = "restored inside a read deny because it is a write root"
	}
	return Decision{Allow: true, Rule: by.Rule.Origin, Why: why}
}

func (w windows) denyWhy(d policy.PathRule) string {
	why := "hidden by a read deny"
	if d.Pattern && strings.ContainsAny(d.Path.Rel(), "*?") {
		why += " (a glob: expanded at initialize; files created later are not covered)"
	}
	return why
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
	// command reaches loopback ports outside the proxy range (the
	// plan's open-loopback filter, emit/wfp install.go).
	return []knob{w.sw(localBindingName, "network.allowLocalBinding", w.p.Network.AllowLocalBinding,
		"the command may connect to every loopback port but 1 (the machine's filters were installed with --allow-loopback)",
		"the WFP filters block the command's loopback connects outside the proxy port range (listening is not filtered, but nothing in the sandbox can connect to it)")}
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

// winACL is the access-control program of the policy's Windows plan
// (wfp.NewACL), bound to the evaluator's host facts, and the position of
// each settings entry in its list, for answers that name the first.
type winACL struct {
	b     *wfp.Bound
	order map[policy.Origin]int
}

// acl returns the evaluator's program, made on first use.
func (w windows) acl() *winACL {
	make := func() *winACL {
		fs := &w.p.Filesystem
		a := &winACL{b: wfp.NewACL(w.p).Bind(w.expand), order: map[policy.Origin]int{}}
		n := 0
		for _, l := range [][]policy.PathRule{fs.AllowRead, fs.AllowWrite, fs.DenyRead, fs.DenyWrite, fs.CredentialMasks} {
			for _, r := range l {
				if _, ok := a.order[r.Origin]; !ok {
					a.order[r.Origin] = n
				}
				n++
			}
		}
		return a
	}
	x := w.idx
	if x == nil {
		return make()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.windows == nil {
		x.windows = make()
	}
	return x.windows
}

// before reports whether entry x comes from a settings entry listed
// before y's (allowRead before allowWrite); any entry comes before nil.
func (a *winACL) before(x, y *wfp.Entry) bool {
	return y == nil || a.order[x.Rule.Origin] < a.order[y.Rule.Origin]
}

// firstDeny is the read deny of the steps the settings list first, and
// the level of its nearest entry.
func (a *winACL) firstDeny(steps []wfp.Step) (*wfp.Entry, int) {
	var first *wfp.Entry
	level := 0
	for _, s := range steps {
		if s.Entry.Kind == wfp.DenyRead && s.Applied() && a.before(s.Entry, first) {
			first, level = s.Entry, s.Level
		}
	}
	return first, level
}

// nearestGrant is the level of the nearest grant the steps apply (write
// roots' only, with writes), or -1 for none.
func nearestGrant(steps []wfp.Step, writes bool) int {
	for _, s := range steps {
		k := s.Entry.Kind
		if !s.Applied() || k == wfp.WriteGrant && writes && s.Ranked == "demoted" {
			continue
		}
		if k == wfp.WriteGrant || k == wfp.ReadGrant && !writes {
			return s.Level
		}
	}
	return -1
}

// mostSpecific is the read deny with the longest spelling among those
// sitting no farther than level (-1: any), the first listed of equals.
func (a *winACL) mostSpecific(steps []wfp.Step, level int) *wfp.Entry {
	var best *wfp.Entry
	for _, s := range steps {
		x := s.Entry
		if x.Kind != wfp.DenyRead || !s.Applied() || level >= 0 && s.Level > level {
			continue
		}
		if n, m := len(x.Rule.Path.String()), 0; best != nil {
			m = len(best.Rule.Path.String())
			if n < m || n == m && !a.before(x, best) {
				continue
			}
		}
		best = x
	}
	return best
}

// decider names the step that decided d.
func (a *winACL) decider(d wfp.Decision) Decision {
	if d.By == nil {
		return Decision{Allow: d.Allow, Rule: policy.Default, Why: "the host's own ACLs"}
	}
	return Decision{Allow: d.Allow, Rule: d.By.Entry.Rule.Origin, Why: d.By.Entry.Purpose}
}

// write answers from the plan's access-control program
// (wfp.Bound.Write): the verdict is the program's; the answer names a
// write deny (the first listed), a credential file, the absence of a
// write root, the most specific read deny no write root inside it
// restores, or the first listed write root that grants p.
func (w windows) write(p string) Decision {
	fs := &w.p.Filesystem
	if fs.Disabled {
		// The command still runs under the write-restricted token,
		// with no write root: nothing the settings name is writable
		// (docs/reference.md#windows-token, docs/reference.md#windows-cases W21).
		return Decision{Rule: w.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled, which on Windows means no write roots: the write-restricted token writes only where a root's grant names it (and in the sandbox account's own profile)"}
	}
	a := w.acl()
	d := a.b.Write(p)
	first := func(keep func(wfp.Step) bool) *wfp.Entry {
		var out *wfp.Entry
		for _, s := range d.Steps {
			if keep(s) && a.before(s.Entry, out) {
				out = s.Entry
			}
		}
		return out
	}
	if d.Allow {
		root := first(func(s wfp.Step) bool { return s.Entry.Kind == wfp.WriteGrant && s.Applied() && s.Ranked == "" })
		if root == nil {
			return a.decider(d)
		}
		why := rootWhy(root.Rule)
		if w.dangerousName(p) {
			why += "; Windows has no mandatory write denies (list it in filesystem.denyWrite)"
		}
		return Decision{Allow: true, Rule: root.Rule.Origin, Why: why}
	}
	// Windows has no mandatory write denies (docs/reference.md#windows-session:
	// the session's denyWrite list is the settings' own), whichever
	// reading the policy comes from (wfp.NewACL).
	if x := first(func(s wfp.Step) bool { return s.Entry.Kind == wfp.DenyWrite }); x != nil {
		return Decision{Rule: x.Rule.Origin, Why: "write deny: wins over allowWrite, even at or above a write root"}
	}
	var mask *policy.PathRule
	for _, s := range d.Steps {
		for _, r := range s.Entry.Rules() {
			if s.Entry.Kind == wfp.DenyRead && r.Mask != nil && (mask == nil || a.order[r.Origin] < a.order[mask.Origin]) {
				mask = &r
			}
		}
	}
	if mask != nil {
		return Decision{Rule: mask.Origin, Why: "credential file: a deny ACE of full access"}
	}
	if first(func(s wfp.Step) bool { return s.Entry.Kind == wfp.WriteGrant }) == nil {
		return Decision{Rule: policy.Default, Why: noWriteRootWhy}
	}
	// A read deny is a deny ACE of full access, writes included (the
	// stricter reading; not verified on Windows), unless a write root
	// at or inside the deny restores it.
	if x := a.mostSpecific(d.Steps, nearestGrant(d.Steps, true)); x != nil {
		return Decision{Rule: x.Rule.Origin, Why: "a read deny is a deny ACE of full access, writes included (the stricter reading; not verified on Windows)"}
	}
	return a.decider(d)
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
