package query

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"srt.dev/compiler/policy"
)

// The macOS reading of path rules, as the Seatbelt profile spells them
// (docs/reference.md#macos-paths, docs/reference.md#macos-filters, docs/reference.md#glob-regex, docs/reference.md#macos-readings; emit/seatbelt):
//
//   - Seatbelt matches the path the kernel resolved: /tmp, /var and /etc
//     are /private/tmp, /private/var and /private/etc, so a rule and a
//     question are compared in that form, and ".." in a rule is folded
//     (the kernel's path has none). The reference gets those forms of an
//     allow from realpath when it starts, so such an allow holds only
//     where its path exists then (macGate);
//   - a literal path is a subpath, in an allow as in a deny;
//   - a pattern is a regex: a deny covers each match and its subtree, an
//     allow only the exact matches (it does not open a matched
//     directory's contents);
//   - a pattern with a bracket set, as a deny, also names the path with
//     the brackets read as text ("[WIP] proj"): the profile carries that
//     reading too. As an allow it does not: the reference reads the name
//     only where it exists at start, and an allow may not be wider;
//   - an allow written with a trailing separator ("/data/in/*/") names
//     directories, and its rule ends in "/": it matches nothing, as in
//     the reference (Seatbelt never checks a path ending in "/"). Linux
//     drops the separator and grants each match with its contents.
//
// emit/seatbelt/agree_test.go compares these answers with the emitted
// profiles.

// macPath is p as Seatbelt sees it: the fixed symlinks into /private
// resolved.
func macPath(p string) string { return policy.MacKernelPath(p) }

// A macEntry is one spelling of a rule on macOS: literal text, then an
// optional glob after it; dirs is set for an allow written with a
// trailing separator, which matches nothing.
type macEntry struct {
	lit, pat string
	dirs     bool
}

// macEntries are the spellings of r on macOS, roots filled in.
//
// The directory a symbolic root stands for is literal text, never a
// pattern: a working directory "[WIP] a" is not a set (the profile
// passes it regex-escaped, CWD_REGEX).
func (e *Evaluator) macEntries(r policy.PathRule, allow bool) []macEntry {
	out := e.macSpellings(r, allow)
	if allow && r.TrailingSeparator {
		for i := range out {
			out[i].dirs = true
		}
	}
	return out
}

// macSpellings are macEntries without the trailing-separator reading.
func (e *Evaluator) macSpellings(r policy.PathRule, allow bool) []macEntry {
	root, p := rootOf(r.Path)
	if root != "" {
		root = strings.TrimSuffix(e.expand(r.Path.Root().Path()), "/")
	}
	if strings.Contains(p+"/", "/../") {
		trail := strings.HasSuffix(p, "/")
		switch rel := path.Clean(strings.TrimPrefix(p, "/")); {
		case root == "":
			p = path.Clean(p)
		case rel == ".." || strings.HasPrefix(rel, "../"):
			// Above the root: srt refuses it on macOS
			// (seatbelt.ClimbingHazard); the answer is for what it names.
			root, p = "", path.Clean(root+p)
		case rel == ".":
			p = ""
		default:
			p = "/" + rel
		}
		if trail && p != "/" {
			p += "/" // an allow glob ending in "/" matches nothing, folded or not
		}
	}
	if root == "" {
		p = macPath(p)
	} else {
		root = macPath(root)
	}
	if !r.Pattern || r.Literal {
		if root != "" && p == "" {
			return []macEntry{{lit: root}}
		}
		return []macEntry{{lit: root + p}}
	}
	out := []macEntry{{lit: root, pat: p}}
	if end := policy.LastSetEnd(p); end >= 0 && !allow {
		// The reading with the brackets as text, up to the component
		// holding the last set; the rest stays a glob if it has one.
		if i := strings.IndexByte(p[end:], '/'); i >= 0 {
			end += i
		} else {
			end = len(p)
		}
		x := macEntry{lit: root + p[:end], pat: p[end:]}
		if !strings.ContainsAny(x.pat, "*?") && policy.LastSetEnd(x.pat) < 0 {
			x = macEntry{lit: root + p}
		}
		out = append(out, x)
	}
	return out
}

// match reports whether entry x matches p: as a deny (the path and its
// subtree) or as an allow (a pattern's exact matches only).
func (x macEntry) match(p string, deny bool) bool {
	if x.dirs && !deny {
		return false // the rule ends in "/"; no checked path does
	}
	if x.pat == "" {
		return p == x.lit || x.lit == "/" || strings.HasPrefix(p, x.lit+"/")
	}
	re := "^" + policy.RegexEscape(x.lit) + strings.TrimSuffix(strings.TrimPrefix(policy.GlobRegex(x.pat), "^"), "$")
	if deny {
		re += "(/.*)?"
	}
	return macRegexp(re + "$").MatchString(p)
}

// macRegexps caches compiled regexes: an evaluator asks the same rules
// about many paths, possibly from several goroutines.
var macRegexps sync.Map

// macRegexp compiles re once. GlobRegex output always compiles; should one
// not, it matches nothing, which for a deny is reported by the agreement
// test with the emitted profile.
func macRegexp(re string) *regexp.Regexp {
	if v, ok := macRegexps.Load(re); ok {
		return v.(*regexp.Regexp)
	}
	r, err := regexp.Compile(re)
	if err != nil {
		r = regexp.MustCompile(`^\x00$`)
	}
	macRegexps.Store(re, r)
	return r
}

// macCovers reports whether r, as a deny, covers p on macOS.
func (e *Evaluator) macCovers(r policy.PathRule, p string) bool {
	p = macPath(p)
	for _, x := range e.macEntries(r, false) {
		if x.match(p, true) {
			return true
		}
	}
	return false
}

// A macList is the list an allow comes from: the reference grants the
// /private spelling of each under its own condition (see macGate).
type macList int

const (
	macReads   macList = iota // filesystem.allowRead
	macWrites                 // the write roots
	macSockets                // network.allowUnixSockets
)

// macGate decides an allow r of list l whose only spelling Seatbelt can
// match is one the reference has only where realpath, when it starts,
// gives it (docs/reference.md#macos-paths, #macos-readings): a path under
// /tmp, /var or /etc, which Seatbelt sees as /private/..., and a path
// with "..", which it sees folded. The reference adopts realpath's result
// only where it is the path itself (".." folded) or, strictly below /tmp
// or /var, its /private form:
//
//   - a write root or a socket path: gated on the path existing (probe);
//     /etc, /tmp and /var themselves never (never);
//   - a pattern: the same for its directory before the first wildcard;
//   - a read allow also gets a second spelling with its directory
//     resolved (a pattern's base directory), with no such bound: gated on
//     that directory, under /etc too; "/tmp", "/var", "/etc" as literal
//     read allows have "/" as their directory and stay unresolved (never).
//
// probe is symbolic (${HOME}/x/.. for "~/x/../y"), as the rule is written.
func macGate(r policy.PathRule, l macList) (probe string, gated, never bool) {
	root, rest := rootOf(r.Path)
	glob := r.Pattern && !r.Literal
	base := rest
	if glob {
		base = macBase(macEntry{pat: rest})
	}
	clean := path.Clean(base)
	top := ""
	for _, d := range policy.MacPrivateDirs {
		if root == "" && (clean == d || strings.HasPrefix(clean, d+"/")) {
			top = d
		}
	}
	switch {
	case top == "" && !strings.Contains(rest+"/", "/../"):
		return "", false, false
	case top != "" && l != macReads && (clean == top || top == "/etc"):
		return "", false, true
	case top != "" && l == macReads && !glob && clean == top:
		return "", false, true
	}
	if l == macReads && !glob {
		base = rest[:strings.LastIndexByte(rest, '/')]
	}
	if root == "" && base == "" {
		base = "/"
	}
	return root + base, true, false
}

// macApplies reports whether allow r of list l applies on macOS on this
// host: not gated, or gated and its probe exists (Options.Exists, asked
// with the host's directories in place of ${HOME} and ${CWD}; without it
// the path is assumed to exist, and macGateWhy says so).
func (e *Evaluator) macApplies(r policy.PathRule, l macList) bool {
	probe, gated, never := macGate(r, l)
	switch {
	case never:
		return false
	case gated && e.opts.Exists != nil:
		return e.opts.Exists(e.expandRaw(probe))
	}
	return true
}

// expandRaw is symbolic path p (a probe of macGate) with the roots the
// options name filled in, and nothing folded.
func (e *Evaluator) expandRaw(p string) string {
	x, ok := asPath(p)
	if !ok || x.Root() != policy.Home && x.Root() != policy.Cwd {
		return p
	}
	if s, ok := x.Expand(e.opts.Home, e.opts.Cwd); ok {
		return s
	}
	return p
}

// macGateWhy is what an answer that rests on allow r of list l adds when
// it holds only where a path exists when srt starts.
func (e *Evaluator) macGateWhy(r policy.PathRule, l macList) string {
	probe, gated, _ := macGate(r, l)
	if !gated || e.opts.Exists != nil {
		return ""
	}
	how := "macOS names it /private" + path.Clean(r.Path.String())
	if strings.Contains(r.Path.String()+"/", "/../") {
		how = "macOS sees it only with \"..\" folded"
	}
	return "; only if " + probe + " exists when srt starts (" + how + ", which the profile grants only then, as the reference does)"
}

// macAllows reports whether r, an allow of list l, matches p on macOS.
func (e *Evaluator) macAllows(r policy.PathRule, p string, l macList) bool {
	return e.macApplies(r, l) && e.macMatches(r, p)
}

// macMatches reports whether r, as an allow, matches p on macOS where it
// applies.
func (e *Evaluator) macMatches(r policy.PathRule, p string) bool {
	p = macPath(p)
	for _, x := range e.macEntries(r, true) {
		if x.match(p, false) {
			return true
		}
	}
	return false
}

// macNotHeld names the first allow of rules (of list l) that would match
// p but does not hold on this host (see macGate), for a deny's answer; ""
// when there is none.
func (e *Evaluator) macNotHeld(rules []policy.PathRule, p string, l macList) string {
	for _, i := range covering(macOS{e}, rules, p, true) {
		r := rules[i]
		if e.macApplies(r, l) || !e.macMatches(r, p) {
			continue
		}
		probe, _, never := macGate(r, l)
		if never {
			return "; " + r.Origin.Key + " names it, but macOS sees it only as /private" + path.Clean(r.Path.String()) + ", a spelling the reference never adopts for that path (realpath's result is refused there)"
		}
		return "; " + r.Origin.Key + " names it, but only if " + e.expandRaw(probe) + " exists when srt starts, and it does not here"
	}
	return ""
}

// macSample is a path r names (a pattern's glob characters replaced).
func (e *Evaluator) macSample(r policy.PathRule) string {
	x := e.macEntries(r, true)[0]
	return x.lit + policy.GlobSample(x.pat)
}

// readMac answers a read on macOS by the profile's steps (docs/reference.md#macos-reads):
// everything readable; the denies; the allows; then again every pattern
// deny minus the allows it covers, every literal deny that lies strictly
// inside a literal allow, and every credential deny; the root directory
// itself stays readable.
func (e *Evaluator) readMac(p string) Decision {
	fs := &e.p.Filesystem
	mac := macOS{e}
	var covers []policy.PathRule
	for _, i := range covering(mac, fs.DenyRead, p, false) {
		if d := fs.DenyRead[i]; e.macCovers(d, p) {
			covers = append(covers, d)
		}
	}
	if len(covers) == 0 {
		return Decision{Allow: true, Rule: policy.Default, Why: "everything is readable unless a read deny hides it"}
	}
	if macPath(p) == "/" {
		return Decision{Allow: true, Rule: covers[0].Origin, Why: "the root directory itself stays readable (dyld needs it); what is below it stays denied"}
	}
	allows := covering(mac, fs.AllowRead, p, true) // a superset of the allows that match p
	var allow *policy.PathRule
	for _, i := range allows {
		if a := fs.AllowRead[i]; e.macAllows(a, p, macReads) {
			if allow == nil || e.macGateWhy(*allow, macReads) != "" {
				allow = &a // one that holds whatever exists wins
			}
		}
	}
	// The deny that decides: a credential deny, or one the late block
	// repeats after the allows; else, with no allow, the most specific.
	var hiding *policy.PathRule
	for _, d := range covers {
		late := allow == nil || isCredential(d)
		// A pattern covering p only through the reading of its bracket
		// set as a name ("./build[1]") is a literal deny here.
		var lits []string
		glob := false
		for _, x := range e.macEntries(d, false) {
			switch {
			case !x.match(macPath(p), true):
			case x.pat != "":
				glob = true
			default:
				lits = append(lits, x.lit)
			}
		}
		if !late && glob {
			late = true
			for _, i := range allows {
				// As the reference decides it, with this host's
				// directories: an allow written from another root
				// (${HOME}, ${CWD}, "/") than the deny is carved out
				// where the deny covers it here.
				if a := fs.AllowRead[i]; e.macCovers(d, e.macSample(a)) && e.macAllows(a, p, macReads) {
					late = false // carved out: (require-not allow)
					break
				}
			}
		} else if !late {
			for _, l := range lits {
				// A literal allow l lies strictly inside is filed under
				// one of l's ancestors.
				for _, i := range covering(mac, fs.AllowRead, l, true) {
					if a := fs.AllowRead[i]; (!a.Pattern || a.Literal) && strictlyInside(l, e.macEntries(a, true)[0].lit) {
						late = true // re-emitted whole after the allows
					}
				}
			}
		}
		if late && (hiding == nil || len(d.Path.String()) > len(hiding.Path.String())) {
			hiding = &d
		}
	}
	if hiding != nil {
		why := "hidden by a read deny"
		if allow != nil {
			why += " (it is repeated after the allows, so " + allow.Origin.Key + " does not reopen it)"
		} else {
			why += e.macNotHeld(fs.AllowRead, p, macReads)
		}
		return Decision{Rule: hiding.Origin, Why: why}
	}
	return Decision{Allow: true, Rule: allow.Origin, Why: "reopened inside a read deny by this rule" + e.macGateWhy(*allow, macReads)}
}

// rootOf divides a policy path into the symbolic root it is written
// from, ${HOME} or ${CWD} as its marker ("" for any other root), and the
// rest: "" or "/..." after a symbolic root, the whole path otherwise.
func rootOf(p policy.Path) (root, rest string) {
	switch r := p.Root(); {
	case r != policy.Home && r != policy.Cwd:
		return "", p.String()
	case p.Rel() == "":
		return string(r), ""
	default:
		return string(r), "/" + p.Rel()
	}
}

// sameRoot reports whether a and b are written from the same symbolic
// root (see rootOf).
func sameRoot(a, b policy.Path) bool {
	ra, _ := rootOf(a)
	rb, _ := rootOf(b)
	return ra == rb
}

// macOS is the Seatbelt profile (emit/seatbelt), read as described at the
// top of this file.
type macOS struct{ *Evaluator }

func (m macOS) target() Target { return MacOS }

// keys files each spelling of r on macOS (macEntries, as a deny or an
// allow): a literal one under its text, a glob under the directory its
// text before the first wildcard ends in (the root's text is literal).
func (m macOS) keys(r policy.PathRule, allow bool) ([]keyed, bool) {
	var out []keyed
	for _, x := range m.macEntries(r, allow) {
		if x.pat == "" {
			if x.lit == "" || x.lit != "/" && strings.HasSuffix(x.lit, "/") {
				return nil, false
			}
			out = append(out, keyed{key: x.lit})
			continue
		}
		k, ok := patternKey(0, x.lit+x.pat, len(x.lit))
		if !ok {
			return nil, false
		}
		out = append(out, k...)
	}
	return out, true
}

func (m macOS) forms(p string) []string { return []string{macPath(p)} }

func (m macOS) covers(r policy.PathRule, p string) bool { return m.macCovers(r, p) }

func (m macOS) credentialRead(c policy.PathRule) Decision {
	return Decision{Rule: c.Origin, Why: "credential mask: " + string(MacOS) + " cannot redirect a read, so the file is read-denied"}
}

func (m macOS) read(p string) Decision { return m.readMac(p) }

func (m macOS) write(p string) Decision {
	fs := &m.p.Filesystem
	if fs.Disabled {
		return m.disabled()
	}
	if d, ok := writeDenied(m, fs.DenyWrite, p); ok {
		return d
	}
	if _, ok := firstCovering(m, m.gitHostRules(), p); ok {
		return Decision{Rule: policy.Mandatory, Why: macGitHostWhy}
	}
	if d, ok := m.mandatoryBelow(p); ok {
		return d
	}
	var root *policy.PathRule
	for _, i := range covering(m, fs.AllowWrite, p, true) {
		a := fs.AllowWrite[i]
		if m.macDropped(a) || !m.macAllows(a, p, macWrites) {
			continue
		}
		// A pattern root allows its exact matches only.
		gated := m.macGateWhy(a, macWrites) != ""
		if root == nil || !gated {
			root = &a
		}
		if !gated {
			break // one that holds whatever exists wins
		}
	}
	if root == nil {
		return Decision{Rule: policy.Default, Why: noWriteRootWhy + m.macNotHeld(m.macWriteRoots(), p, macWrites)}
	}
	why := rootWhy(*root) + m.macGateWhy(*root, macWrites)
	if m.macDeepProtectedDir(p) {
		why += "; a protected directory below the working directory: what is inside it may not be written, but the directory itself may be created, renamed or removed (the profile's CWD/**/NAME/**, docs/reference.md#mandatory-denies)"
	}
	return Decision{Allow: true, Rule: root.Origin, Why: why}
}

// macGitHostWhy says how macOS protects git's files outside the repository
// (emit/seatbelt's mandatory entries).
const macGitHostWhy = "git's configuration outside the repository (or gitk's start-up file) in the home directory, whatever the settings say: " +
	"the profile denies writing it, created later too, and removing or renaming the directories above it; " +
	"the files $XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL and $GIT_CONFIG_SYSTEM name, and what these include, are not covered on macOS"

// macDeepProtectedDir reports whether p is itself a mandatory directory
// (.vscode, .idea, .git/hooks, .claude/commands, .claude/agents) deeper
// than directly in the working directory, which macOS protects only
// inside.
func (e *Evaluator) macDeepProtectedDir(p string) bool {
	below, ok := policy.Cwd.Within(e.expand(policy.Cwd.Path()), p)
	if !ok || below.Rel() == "" || e.p.Filesystem.MandatoryScan == nil {
		return false
	}
	segs := strings.Split(below.Rel(), "/")
	n := len(segs)
	last := segs[n-1]
	switch {
	case n >= 2 && (last == ".vscode" || last == ".idea"):
		return true
	case n >= 3 && (segs[n-2] == ".git" && last == "hooks" || segs[n-2] == ".claude" && (last == "commands" || last == "agents")):
		return true
	}
	return false
}

// mandatoryBelow reports the mandatory deny that protects p below the
// working directory: the profile's regexes cover the names at any depth,
// created later too. A protected directory directly in the working
// directory is a subpath; one deeper is the pattern CWD/**/NAME/**
// (docs/reference.md#mandatory-denies), which matches what is inside it,
// not the directory itself: a deeper .vscode may be created, removed or
// renamed, its contents may not be written.
func (m macOS) mandatoryBelow(p string) (Decision, bool) {
	scan := m.p.Filesystem.MandatoryScan
	if scan == nil {
		return Decision{}, false
	}
	for c := range m.protectedNames(p, scan) {
		if !c.dir || c.level == 0 || c.end < c.n {
			return Decision{Rule: scan.Origin, Why: "mandatory write deny below the working directory (any depth, names created later too)"}, true
		}
	}
	return Decision{}, false
}

func (m macOS) trailingSeparator() string {
	return "written with a trailing /: it names directories, and Seatbelt never checks a path ending in /, so on macOS this allow matches nothing (as in the reference); without the / it would grant every file the glob matches"
}

// everything: "/" itself stays readable under a deny of "/" (readMac); a
// path below it stands for the rest.
func (m macOS) everything() string { return "/nonexistent/srt-probe" }

func (m macOS) extraWrites() []Line { return nil }

// listsWrite: not the default /dev and /tmp/claude names, the same in
// every policy.
func (m macOS) listsWrite(r policy.PathRule) bool {
	return !(r.Origin == policy.Default && !r.Convenience)
}

func (m macOS) mandatoryBelowWhy() (string, bool) { return ", and at any depth below it", true }

func (m macOS) knobs() []knob {
	pr, n := &m.p.Process, &m.p.Network
	trustd := m.sw("weaker network isolation", "enableWeakerNetworkIsolation", pr.EnableWeakerNetworkIsolation, "trustd is reachable (TLS verification of Go programs), at the cost of a wider mach-lookup", "refused")
	if !pr.EnableWeakerNetworkIsolation {
		// An allowMachLookup prefix ("*", "com.apple.*") opens trustd
		// too.
		for _, s := range n.AllowMachLookup {
			if prefix, ok := strings.CutSuffix(s, "*"); ok && strings.HasPrefix(trustdService, prefix) || s == trustdService {
				trustd.d = Decision{Allow: true, Rule: m.switchOrigin("network.allowMachLookup"), Why: "trustd is reachable through allowMachLookup " + strconv.Quote(s) + ", as enableWeakerNetworkIsolation would make it"}
				break
			}
		}
	}
	out := []knob{
		m.sw("Apple Events", "allowAppleEvents", pr.AllowAppleEvents, "the command may script other applications", "refused"),
		trustd,
		m.sw("pseudo-terminals", "allowPty", pr.AllowPty, "the command may open ptys", "refused"),
		m.sw(localBindingName, "network.allowLocalBinding", n.AllowLocalBinding, "the command may bind and accept on local addresses", "the command cannot listen"),
	}
	for _, s := range n.AllowMachLookup {
		out = append(out, knob{"mach-lookup " + s, Decision{Allow: true, Rule: m.switchOrigin("network.allowMachLookup"), Why: "a listed Mach service"}})
	}
	return out
}

// trustdService is the Mach service enableWeakerNetworkIsolation opens
// (docs/reference.md#macos-optional-blocks).
const trustdService = "com.apple.trustd.agent"
