package seatbelt

import (
	"slices"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
)

// files writes the file-read section (docs/reference.md#macos-reads), the file-write section
// (docs/reference.md#macos-reads) and the trailing unlink rule (docs/reference.md#macos-unlink-rule).
func (m *emitter) files(fs policy.Filesystem) {
	var denies []entry
	var creds []policy.PathRule
	var caller []policy.PathRule
	for _, r := range fs.DenyRead {
		if strings.HasPrefix(r.Origin.Key, "credentials.") {
			creds = append(creds, r)
		} else {
			caller = append(caller, r)
		}
	}
	denies = append(entries(caller), entries(creds)...)
	allows, droppedReads := m.allowEntries(fs.AllowRead, readAllow)
	var writes, droppedWrites []entry
	if !fs.Disabled {
		writes, droppedWrites = m.allowEntries(fs.AllowWrite, writeRoot)
		// Masked files are left out, as the compiler leaves them out
		// when it drops a convenience root.
		m.keepConvenience(writes, denies, allows)
	}
	// macOS cannot show a masked copy: a masked file is not readable at all.
	for _, e := range entries(fs.CredentialMasks) {
		e.cred = true
		denies = append(denies, e)
	}
	m.read(denies, allows, writes, droppedReads)
	if fs.Disabled {
		m.add(Rule{Action: Allow, Ops: ops("file-write*"), Step: StepNoFiles})
		return
	}
	m.write(fs, writes, droppedWrites)
	m.trailing(denies, allows, writes, fs.AllowWrite)
}

// read writes the file-read section: everything readable, the denies, the
// allows inside them, the denies that must win over those allows, and the
// rules that keep a denied path from being moved somewhere readable.
//
// dropped are the spellings of the allows the profile leaves out (see
// Rule.Dropped).
func (m *emitter) read(denies, allows, writes, dropped []entry) {
	m.comment("File read: deny, then allow inside the denies")
	m.add(Rule{Action: Allow, Ops: ops("file-read*"), Step: StepRead})
	var fs []Filter
	for _, d := range denies {
		fs = append(fs, m.denyF(d))
	}
	m.rule(StepReadDeny, Deny, ops("file-read*"), fs)
	fs = nil
	for _, a := range allows {
		fs = append(fs, m.allowF(a))
	}
	if r := m.rule(StepReadAllow, Allow, ops("file-read*"), fs); r != nil {
		r.Dropped = m.droppedFilters(dropped)
	}

	// Step 4: last match wins, so what must beat an allow comes again.
	fs = nil
	root := false
	ix, lits := newOtherIndex(allows, m.linear), newAllowSet(allows, m.linear)
	for _, d := range denies {
		switch {
		case d.cred:
			fs = append(fs, m.denyF(d))
		case d.glob():
			fs = append(fs, m.carve(d, ix))
			root = root || d.root == "" && d.goRegexp(true).MatchString("/")
		default:
			// Under different roots the relation is a host fact; the
			// common case (deny ~, allow the working directory inside it)
			// needs no re-emission, and the runtime refuses the other
			// (CrossRootHazard). The text reading of a pattern
			// ("./src/[ab]*.go" as a name, under an allow "~/proj") is
			// re-emitted behind a carve parameter instead: the runtime
			// does not look at readings, and the parameter applies the
			// deny where it lies inside the allow on this host.
			fs = append(fs, m.late(d, allows, lits)...)
		}
		root = root || d.spelling() == "/"
	}
	m.rule(StepReadLate, Deny, ops("file-read*"), fs)
	if root {
		// The root inode must stay readable or dyld aborts.
		m.add(Rule{Action: Allow, Ops: ops("file-read*"), Filters: []Filter{lit("/")}, Step: StepReadRoot})
	}
	if len(denies) > 0 {
		m.add(Rule{Action: Allow, Ops: ops("file-read-metadata"), Filters: []Filter{Filter{Kind: VnodeType, Text: "DIRECTORY", Origin: builtin}.withText()}, Step: StepReadMetadata})
	}
	m.rule(StepReadMoveBlock, Deny, ops("file-write-unlink", "file-write-create"), m.moveBlock(denies))
	fs = nil
	for _, w := range writes {
		fs = append(fs, m.allowF(w))
	}
	m.rule(StepWriteRootMove, Allow, ops("file-write-unlink", "file-write-create"), fs)
}

// filters are the allow filters of es.
func (m *emitter) filters(es []entry) []Filter {
	var out []Filter
	for _, e := range es {
		out = append(out, m.allowF(e))
	}
	return out
}

// droppedFilters are the allow filters of spellings the profile leaves
// out: never rendered, so a string of theirs too long for a profile is
// no error.
func (m *emitter) droppedFilters(es []entry) []Filter {
	err := m.err
	out := m.filters(es)
	m.err = err
	return out
}

// late are the filters that re-emit literal deny d after the allows
// (docs/reference.md#macos-reads step 4): d, where it lies strictly inside a literal allow; for a
// text reading inside an allow from another root, d behind the carve
// parameter of the pair (the allow "covers" the deny), set where it does
// on the host.
func (m *emitter) late(d entry, allows []entry, lits *allowSet) []Filter {
	if !d.text && !lits.linear {
		// Only a text reading makes carve parameters here.
		if lits.inside(d.spelling()) {
			return []Filter{m.denyF(d)}
		}
		return nil
	}
	var out []Filter
	for _, a := range allows {
		if a.glob() {
			continue
		}
		switch relate(d.spelling(), a.spelling()) {
		case inside:
			return []Filter{m.denyF(d)}
		case unknown:
			if d.text && !strings.HasPrefix(d.spelling(), rootParents) && mayCover(a, d) {
				out = append(out, m.carveParam(a, d))
			}
		}
	}
	return out
}

// carve is d's deny filter minus the entries it covers (docs/reference.md#macos-reads step 4).
//
// Whether d covers an entry written from another root (an absolute deny
// over the home directory, "/home/me/**/*", and an allow "~/work") is a
// fact of the host. Such an entry is subtracted through a carve parameter
// (see carveParam), which the runtime sets from this host's directories
// to the reference's decision: the deny is carved where it covers the
// entry here, and not elsewhere (a leaf-shaped deny such as "**/.env"
// covers no directory and must stay whole inside it).
//
// Only the entries ix finds can be subtracted; they are taken in order.
func (m *emitter) carve(d entry, ix *otherIndex) Filter {
	var nots []Filter
	seen := map[string]bool{}
	var pieces []string
	if d.root != "" && !ix.linear {
		pieces = literalPieces(d)
	}
	for _, i := range ix.candidates(d) {
		o := ix.es[i]
		var f Filter
		switch {
		case crossRoot(d, o) && !o.convenience && (pieces == nil || o.root != "" || mayContain(pieces, ix.samples[i])) && mayCover(d, o):
			f = m.carveParam(d, o)
		case crossRoot(d, o):
			continue
		case covers(d, o):
			f = m.allowF(o)
		default:
			continue
		}
		if s := f.String(); !seen[s] {
			seen[s] = true
			nots = append(nots, Filter{Kind: RequireNot, Args: []Filter{f}, Origin: f.Origin})
		}
	}
	if len(nots) == 0 {
		return m.denyF(d)
	}
	deny := m.denyF(d)
	return Filter{Kind: RequireAll, Args: append([]Filter{deny}, nots...), Origin: deny.Origin}
}

// crossRoot reports whether deny d and entry o are written from different
// roots, so that whether d covers o depends on the host.
//
// A default convenience write root (~/.npm/_logs) is never carved this
// way: where a read deny covers it, the reference drops it, so there is
// nothing to subtract.
func crossRoot(d, o entry) bool { return d.root != o.root }

// mayCover reports whether deny d, written from a symbolic root, can cover
// the absolute entry o on some host (with the root any directory but
// "/"); for other pairs it reports true. It keeps the carve parameters to
// the pairs a host can decide either way ("/dev/null" never lies in
// ${HOME}/.ssh).
func mayCover(d, o entry) bool {
	if d.root == "" || o.root != "" {
		return true
	}
	re := "^(/[^/]+)+" + policy.RegexEscape(d.lit)
	if d.glob() {
		re += body(d.pat) + "(/.*)?$"
	} else {
		re += "/.+$" // strictly inside a literal deny
	}
	r, err := compileOnce(re)
	return err != nil || r.MatchString(o.sample())
}

// A carve is a subtraction decided at run time: deny d carves entry o on
// hosts where d covers o (see HostDefines). With denies set, it is a
// convenience write root o, kept on hosts where none of denies hides it
// (see keepConvenience).
type carve struct {
	d, o           *entry
	denies, allows []entry
}

// keepConvenience puts a default convenience write root (~/.npm/_logs)
// that a read deny written from another root may cover behind a carve
// parameter: the reference drops such a root where a read deny covers it
// on the host and no read allow inside the deny covers it again
// (docs/reference.md#default-writable); the compiler could decide only the spellings.
func (m *emitter) keepConvenience(writes, denies, allows []entry) {
	for i, w := range writes {
		if !w.convenience {
			continue
		}
		for _, d := range denies {
			// A deny from the same root that covers it was reopened by
			// an allow (the compiler drops the others); only a literal
			// allow does that on macOS.
			same := d.root == w.root && symCovers(d, w.spelling()) && !reopens(d, w, allows)
			if same || d.root != w.root && mayCover(d, w) {
				m.carves = append(m.carves, carve{o: m.intern(w), denies: denies, allows: allows})
				writes[i].pre = carveParamName(len(m.carves))
				break
			}
		}
	}
}

// symCovers reports whether deny d covers the symbolic path p written
// from the same root: p is d or below it, or d's pattern matches p or an
// ancestor.
func symCovers(d entry, p string) bool {
	if d.glob() {
		return d.goRegexp(true).MatchString(p)
	}
	r := relate(p, d.spelling())
	return r == same || r == inside
}

// reopens reports whether a literal allow from w's root, inside deny d,
// covers convenience root w: then it is kept on every host.
func reopens(d, w entry, allows []entry) bool {
	for _, a := range allows {
		if a.glob() || a.dirs || a.root != w.root {
			continue
		}
		if r := relate(w.spelling(), a.spelling()); (r == same || r == inside) && symCovers(d, a.spelling()) {
			return true
		}
	}
	return false
}

// carveParam is o's allow filter behind the carve parameter of (d, o):
// the parameter is "" where d covers o on the host, and carveOff, a
// prefix no path has, where it does not, so the filter then matches
// nothing and nothing is carved.
func (m *emitter) carveParam(d, o entry) Filter {
	key := [2]string{m.denyF(d).String(), m.allowF(o).String()}
	n, ok := m.carveIndex[key]
	if !ok {
		if m.carveIndex == nil {
			m.carveIndex = map[[2]string]int{}
		}
		m.carves = append(m.carves, carve{d: m.intern(d), o: m.intern(o)})
		n = len(m.carves)
		m.carveIndex[key] = n
	}
	pre := carveParamName(n)
	if o.pre != "" {
		pre += " " + o.pre // a twin behind its own parameter
	}
	f := m.allowFPrefixed(o, preParts(pre))
	f.Gate = o.gate
	return f
}

// intern is the one copy of e the carves share: a profile may have a
// carve for each pair of a deny and an entry.
func (m *emitter) intern(e entry) *entry {
	if p, ok := m.interned[e]; ok {
		return p
	}
	if m.interned == nil {
		m.interned = map[entry]*entry{}
	}
	p := &e
	m.interned[e] = p
	return p
}

// moveBlock are the filters that keep denied paths and their ancestors
// from being renamed or removed (docs/reference.md#macos-reads step 7): each entry's deny filter,
// for a pattern its base directory, then every ancestor up to "/".
func (m *emitter) moveBlock(es []entry) []Filter {
	var fs []Filter
	for _, e := range es {
		fs = append(fs, m.denyF(e))
		base := e.base()
		if e.glob() && base != "/" {
			fs = append(fs, m.pinF(base, e.origin))
		}
		for _, a := range ancestors(base) {
			fs = append(fs, m.pinF(a, e.origin))
		}
	}
	return fs
}

// mandatory are the write denies of docs/reference.md#mandatory-denies, anchored at the working
// directory: each name there and, through a pattern, at any depth below
// (Seatbelt needs no scan, so the search depth does not apply; this is
// stricter than Linux, which stops at mandatoryDenySearchDepth).
func mandatory(sc *policy.MandatoryScan) []entry {
	if sc == nil {
		return nil
	}
	o := policy.Mandatory
	var out []entry
	add := func(name string, dir bool) {
		pat := "/**/" + name
		if dir {
			pat += "/**"
		}
		out = append(out, entry{root: string(policy.Cwd), lit: "/" + name, origin: o}, entry{root: string(policy.Cwd), pat: pat, origin: o})
	}
	for _, f := range sc.Files {
		add(f, false)
	}
	for _, d := range sc.Dirs {
		add(d, true)
	}
	dirs, files := sc.GitDirs, sc.GitFiles
	if dirs == nil && files == nil {
		// A policy from before the lists: today's names.
		dirs, files = policy.GitDirs, policy.GitFiles
		if sc.GitConfig {
			files = append(append([]string{}, files...), policy.GitConfigFiles...)
		}
	}
	// The same names in every repository, and in each submodule's git
	// directory under .git/modules (whose name may have slashes).
	gitName := func(name string, dir bool) {
		add(".git/"+name, dir)
		pat := "/**/.git/modules/**/" + name
		if dir {
			pat += "/**"
		}
		out = append(out, entry{root: string(policy.Cwd), pat: pat, origin: o})
	}
	for _, d := range dirs {
		gitName(d, true)
	}
	for _, f := range files {
		gitName(f, false)
	}
	return out
}

// gitHost are git's configuration outside the repository and gitk's
// start-up file in the home directory (policy.GitHostHome), denied with
// the mandatory denies, created later too. The profile reads no
// environment: $XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL and the files they
// include are not among them.
func gitHost(sc *policy.MandatoryScan) []entry {
	if sc == nil {
		return nil
	}
	var out []entry
	for _, p := range policy.GitHostHome() {
		root, rest := splitPath(p)
		out = append(out, entry{root: root, lit: rest, origin: policy.Mandatory})
	}
	return out
}

// write writes the file-write section: the write roots, the denies inside
// them (literal denies folded into group regexes where many share a
// shape), and the rules that keep those from being moved.
//
// dropped are the spellings of the write roots the profile leaves out
// (see Rule.Dropped).
func (m *emitter) write(fs policy.Filesystem, writes, dropped []entry) {
	m.comment("File write: only inside the write roots, minus the denies")
	if r := m.rule(StepWriteRoot, Allow, ops("file-write*"), m.filters(writes)); r != nil {
		r.Dropped = m.droppedFilters(dropped) // each has its spelling as written in writes
	}

	var caller []policy.PathRule
	for _, r := range fs.DenyWrite {
		if r.Origin != policy.Mandatory { // emitted in their macOS form below
			caller = append(caller, r)
		}
	}
	var plain, extra []entry
	for _, r := range caller {
		e := entryOf(r)
		plain = append(plain, spellings(e)...)
		if x, ok := reading(e); ok {
			extra = append(extra, spellings(x)...)
		}
	}
	all := append(append(plain, mandatory(fs.MandatoryScan)...), extra...)
	groups, rest := group(all)
	var fl []Filter
	for _, g := range groups {
		fl = append(fl, m.groupRegex(g, false)...)
	}
	for _, e := range rest {
		fl = append(fl, m.denyF(e))
	}
	m.rule(StepWriteDeny, Deny, ops("file-write*"), fl)
	home := gitHost(fs.MandatoryScan)
	if len(home) > 0 {
		m.comment("Git's configuration outside the repository, whatever the settings say")
		fl = nil
		for _, e := range home {
			fl = append(fl, m.denyF(e))
		}
		m.rule(StepGitHost, Deny, ops("file-write*"), fl)
	}
	fl = m.moveBlock(append(rest, home...))
	for _, g := range groups {
		o := g.members[0].origin
		fl = append(fl, m.groupRegex(g, false)...)
		fl = append(fl, m.groupRegex(g, true)...)
		fl = append(fl, m.pinF(g.dir, o))
		for _, a := range ancestors(g.dir) {
			fl = append(fl, m.pinF(a, o))
		}
	}
	m.rule(StepWriteMoveBlock, Deny, ops("file-write-unlink", "file-write-create"), fl)
}

// trailing writes the last file rule (docs/reference.md#macos-unlink-rule): a read-denied path inside a
// write root may not be unlinked, since docs/reference.md#macos-reads step 8 re-allowed unlinking
// in write roots and a renamed secret would be readable.
//
// The directories pinned with it are those above the deny (for a pattern,
// its base directory and above) that lie inside a write root or are one.
// The reference pins only those strictly inside a root; a root that holds
// a read deny is pinned too, because renaming it into another write root
// (/tmp/claude is always one) would carry the denied files out of the
// deny's reach, as the reference itself pins a root holding a credential
// file.
//
// Where a deny and a write root start at different symbolic roots, whether
// one lies inside the other is a fact of the host; the emitter then
// assumes it does (an unlink deny outside every write root changes
// nothing). It assumes ${HOME} and ${CWD} are not inside the built-in
// write roots (/dev/stdout, /tmp/claude, ~/.npm/_logs, ...), and the
// working directory not inside the convenience roots (~/.npm/_logs); an
// absolute deny may lie inside those (denyRead ["/Users/**/*.key"]).
func (m *emitter) trailing(denies, allows, writes []entry, rules []policy.PathRule) {
	if len(writes) == 0 {
		return
	}
	builtin := builtins(rules)
	// inRoot reports whether p lies strictly inside a write root (or is
	// one, when orIs).
	inRoot := func(p string, orIs bool) bool {
		for _, w := range writes {
			if w.dirs {
				continue // matches nothing: no path is writable through it
			}
			if w.glob() {
				if orIs && globRootNames(w, p) {
					return true
				}
				continue
			}
			switch relate(p, w.spelling()) {
			case inside:
				return true
			case same:
				if orIs {
					return true
				}
			case unknown:
				if assumeInside(p, w, builtin) {
					return true
				}
			}
		}
		return false
	}
	pins := func(from string, self, orIs bool, o policy.Origin) []Filter {
		var out []Filter
		list := ancestors(from)
		if self {
			list = append([]string{from}, list...)
		}
		for _, a := range list {
			if a != "/" && inRoot(a, orIs) { // "/" is never pinned (docs/reference.md#macos-reads step 7)
				out = append(out, m.pinF(a, o))
			}
		}
		return out
	}
	both := newOtherIndex(append(append([]entry{}, allows...), writes...), m.linear)
	var fs []Filter
	for _, d := range denies {
		switch {
		case d.cred:
			fs = append(fs, m.denyF(d))
			fs = append(fs, pins(d.base(), false, true, d.origin)...)
		case d.glob():
			if !m.intersects(d, writes, builtin) {
				continue
			}
			fs = append(fs, m.carve(d, both))
			fs = append(fs, pins(d.base(), true, true, d.origin)...)
		default:
			if !inRoot(d.spelling(), false) && !globRootMatches(d, writes) {
				continue
			}
			fs = append(fs, m.carve(d, both))
			fs = append(fs, pins(d.spelling(), false, true, d.origin)...)
		}
	}
	if len(fs) > 0 {
		m.comment("Read-denied paths inside write roots cannot be unlinked")
	}
	m.rule(StepTrailing, Deny, ops("file-write-unlink"), fs)
}

// intersects reports whether a pattern deny's region meets a write root:
// any pattern root does; a literal root does when the pattern's base is at,
// inside or above it, or when that is a fact of the host.
func (m *emitter) intersects(d entry, writes []entry, builtin map[string]builtinRoot) bool {
	for _, w := range writes {
		if w.glob() {
			return true
		}
		switch relate(d.base(), w.spelling()) {
		case same, inside, contains:
			return true
		case unknown:
			if builtin[w.spelling()] == convenienceRoot && convenienceMayMatch(d, w) || assumeInside(d.base(), w, builtin) {
				return true
			}
		}
	}
	return false
}

// A builtinRoot is a default write root: one of the fixed device and
// /tmp/claude names, or a convenience root under ${HOME}.
type builtinRoot int

const (
	notBuiltin builtinRoot = iota
	fixedRoot
	convenienceRoot
)

// builtins are the default write roots among rules, by spelling.
func builtins(rules []policy.PathRule) map[string]builtinRoot {
	out := map[string]builtinRoot{}
	for _, r := range rules {
		switch {
		case r.Convenience:
			out[r.Path.String()] = convenienceRoot
		case r.Origin == policy.Default:
			out[r.Path.String()] = fixedRoot
		}
	}
	return out
}

// assumeInside decides, for symbolic path p and literal write root w
// written from another root, whether the emitter takes p to lie inside w:
// yes, except for the fixed default roots, and for the convenience roots
// unless p is absolute.
func assumeInside(p string, w entry, builtin map[string]builtinRoot) bool {
	switch builtin[w.spelling()] {
	case fixedRoot:
		return false
	case convenienceRoot:
		// An absolute path inside ${HOME}/.npm/_logs has ".npm/_logs" in
		// it.
		if strings.HasPrefix(p, rootParents) {
			return false // a root's parents, not an absolute path
		}
		root, _ := split(p)
		return root == "" && strings.Contains(p+"/", w.lit+"/")
	}
	return true
}

// convenienceMayMatch reports whether absolute pattern deny d may match a
// file inside convenience root w on some host: a file there named like
// d's last component, with ${HOME} anywhere below d's base directory.
func convenienceMayMatch(d, w entry) bool {
	if d.root != "" {
		return false // the working directory is assumed outside it
	}
	i := strings.LastIndexByte(d.pat, '/')
	leaf := policy.GlobSample(d.pat[i+1:])
	re := d.goRegexp(true)
	for _, dir := range []string{strings.TrimSuffix(d.base(), "/"), d.lit + policy.GlobSample(d.pat[:i])} {
		if re.MatchString(dir+"/h"+w.lit+"/"+leaf) || re.MatchString(dir+w.lit+"/"+leaf) {
			return true
		}
	}
	return false
}

// globRootMatches reports whether a pattern write root names literal d.
// A pattern root written from another root than d may name it on the
// host; the emitter then assumes it does (stricter).
func globRootMatches(d entry, writes []entry) bool {
	for _, w := range writes {
		cross := w.root != d.root && d.spelling() != "/" // no root but "/" names "/"
		if w.glob() && !w.dirs && (cross || w.goRegexp(false).MatchString(d.spelling())) {
			return true
		}
	}
	return false
}

// globRootNames reports whether pattern write root w may name directory
// p, so that renaming p is allowed there and carries what is denied below
// it away: its regex matches p, or p starts at another root (or is an
// ancestor of one), and the emitter assumes so. The reference pins only
// directories inside literal roots.
func globRootNames(w entry, p string) bool {
	if w.dirs {
		return false // matches nothing
	}
	if r, ok := strings.CutPrefix(p, rootParents); ok {
		return w.root != r
	}
	root, _ := split(p)
	return root != w.root || w.goRegexp(false).MatchString(p)
}

// A denyGroup is literal write denies folded into one regex (docs/reference.md#macos-reads):
// dir/(name|...)/(leaf|...).
type denyGroup struct {
	dir    string
	names  []string
	leaves []string
	// members are the entries folded in, in their order.
	members []entry
}

// groupBudget bounds a group regex, as the reference's 900 bytes do.
const groupBudget = 900

// group folds literal denies that share a grandparent directory and, per
// parent name, the same set of leaves, when at least four names share
// one; it returns the groups and the entries left as they are.
func group(es []entry) ([]denyGroup, []entry) {
	type key struct{ dir, name string }
	leaves := map[key][]string{}
	var order []key
	for _, e := range es {
		dir, name, leaf, ok := shape(e)
		if !ok {
			continue
		}
		k := key{dir, name}
		if _, seen := leaves[k]; !seen {
			order = append(order, k)
		}
		leaves[k] = append(leaves[k], leaf)
	}
	// Per directory, names with the same sorted leaf set.
	type gkey struct{ dir, set string }
	byShape := map[gkey]*denyGroup{}
	var gorder []gkey
	for _, k := range order {
		l := uniqueSorted(leaves[k])
		gk := gkey{k.dir, strings.Join(l, "\x00")}
		g := byShape[gk]
		if g == nil {
			g = &denyGroup{dir: k.dir, leaves: l}
			byShape[gk] = g
			gorder = append(gorder, gk)
		}
		g.names = append(g.names, k.name)
	}
	var groups []denyGroup
	grouped := map[string]bool{}
	for _, gk := range gorder {
		g := byShape[gk]
		if len(g.names) < 4 {
			continue
		}
		for _, n := range g.names {
			for _, l := range g.leaves {
				grouped[g.dir+"/"+n+"/"+l] = true
			}
		}
		groups = append(groups, *g)
	}
	var rest []entry
	for _, e := range es {
		if e.glob() || !grouped[e.spelling()] {
			rest = append(rest, e)
			continue
		}
		for i := range groups {
			if g := &groups[i]; strings.HasPrefix(e.spelling(), g.dir+"/") {
				_, name, _, _ := shape(e)
				if slices.Contains(g.names, name) {
					g.members = append(g.members, e)
					break
				}
			}
		}
	}
	return groups, rest
}

// shape splits a literal entry into grandparent, parent name and leaf; it
// fails for a pattern, a path too shallow, one whose grandparent is "/",
// and one whose grandparent would lie above its symbolic root.
func shape(e entry) (dir, name, leaf string, ok bool) {
	if e.glob() {
		return "", "", "", false
	}
	parts := strings.Split(e.lit, "/") // "", a, b, ...
	if e.root == "" && len(parts) < 4 || e.root != "" && len(parts) < 3 {
		return "", "", "", false
	}
	n := len(parts)
	dir = e.root + strings.Join(parts[:n-2], "/")
	if dir == "" {
		return "", "", "", false
	}
	return dir, parts[n-2], parts[n-1], true
}

func uniqueSorted(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// groupRegex are a group's deny regexes ("dir/(names)/(leaves)(/.*)?") or,
// for pins, "dir/(names)", split so that each stays within groupBudget.
func (m *emitter) groupRegex(g denyGroup, pin bool) []Filter {
	root, rest := split(g.dir)
	prefix := policy.RegexEscape(rest) + "/("
	suffix := ")/(" + joinEscaped(g.leaves) + ")(/.*)?$"
	if pin {
		suffix = ")$"
	}
	var out []Filter
	var names []string
	flush := func() {
		if len(names) > 0 {
			e := entry{root: root, origin: policy.Origin{Key: "filesystem.denyWrite"}}
			f := m.rawRegex(e, prefix+joinEscaped(names)+suffix)
			for _, x := range g.members {
				if _, name, _, _ := shape(x); slices.Contains(names, name) {
					mf := m.denyF(x)
					if pin {
						mf = m.pinF(x.root+x.lit[:strings.LastIndexByte(x.lit, '/')], x.origin)
					}
					f.Members = append(f.Members, mf)
				}
			}
			f.Origin, f.Pin = f.Members[0].Origin, pin
			out = append(out, f)
			names = nil
		}
	}
	for _, n := range g.names {
		if len(names) > 0 && len(prefix)+len(joinEscaped(append(names, n)))+len(suffix) > groupBudget {
			flush()
		}
		names = append(names, n)
	}
	flush()
	return out
}

func joinEscaped(names []string) string {
	esc := make([]string, len(names))
	for i, n := range names {
		esc[i] = policy.RegexEscape(n)
	}
	return strings.Join(esc, "|")
}

// rawRegex is a regex filter from the root of e and a regex after it.
func (m *emitter) rawRegex(e entry, rest string) Filter {
	f := Filter{Kind: Regex, Origin: e.origin}
	if e.root == "" {
		f.Str = Str{m.t("^"+rest, e.origin)}
	} else {
		f.Str = Str{{Text: "^"}, param(rootParams[e.root][1]), m.t(rest, e.origin)}
	}
	return f.withText()
}
