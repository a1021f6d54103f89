package schema

import (
	"regexp"
	"strings"

	"cuelang.org/go/cue"

	"srt.dev/internal/whatwg"
)

// CUE costs tens of microseconds per list element, so a file of 180,000
// domains took seconds to validate although almost every entry is an
// ordinary host name. The loader therefore shows the grammar, of the lists
// below, only the elements it cannot vouch for:
// an element is plain when Go can tell, with the grammar's own regular
// expressions, that neither #Settings nor any rule of #Checks has anything
// to say about it. Every other element is shown to CUE with its own index,
// so the messages and positions are the grammar's. The first element of a
// list is always shown: a rule may ask whether a list is empty
// (maskNeverInjected, list.MinItems of mitmProxy.domains).
//
// The grammar stays the one source of truth: the expressions are read from
// settings.cue when it is compiled, and the tests compare every diagnostic
// with and without this path (TestPlainAgrees, TestPlainAgreesGenerated,
// FuzzPlain) and fail when a rule of #Checks starts reading one of these
// lists (TestPlainListsRules).
//
// The coverage rules (injectCovered, maskExcluded) read allowedDomains and
// excludeDomains whole, and ask about every inject host; see coverViews
// for what they are shown.

// A plainList is a list with a plain check: its document key path, where
// anyKey stands for every key of an object or index of an array, and
// whether an element is plain for the grammar g.
type plainList struct {
	path  Path
	plain func(g *grammar, n *node) bool
}

// anyKey in a plainList's path matches every key or index.
type wildcard struct{}

var anyKey = wildcard{}

var plainLists = []plainList{
	// #AllowEntry: =~#re.allowEntry. Entries starting with "[" are
	// split by #bracket and checked again by bracketedAllow: the host
	// must match #re.host.
	{Path{"network", "allowedDomains"}, func(g *grammar, n *node) bool {
		if n.Kind == kindString && startsBracket(n.Str) {
			return g.fast.host.MatchString(g.bracketHost(n.Str))
		}
		return n.Kind == kindString && g.fast.allowEntry.MatchString(n.Str)
	}},
	// #DenyEntry: =~#re.denyEntry; bracketedDeny as above, where the
	// host may also be "*".
	{Path{"network", "deniedDomains"}, func(g *grammar, n *node) bool {
		if n.Kind == kindString && startsBracket(n.Str) {
			h := g.bracketHost(n.Str)
			return h == "*" || g.fast.host.MatchString(h)
		}
		return n.Kind == kindString && g.fast.denyEntry.MatchString(n.Str)
	}},
	// #AddressRange: =~#re.range, and a prefix of at least /96 for an
	// IPv4-mapped address: those (matching #re.mapped) are left to CUE.
	{Path{"network", "deniedResolvedAddresses"}, func(g *grammar, n *node) bool {
		return n.Kind == kindString && g.fast.addrRange.MatchString(n.Str) && !g.fast.mapped.MatchString(n.Str)
	}},
	// [...string]
	{Path{"network", "allowUnixSockets"}, plainString},
	// #MachName: =~#re.mach.
	{Path{"network", "allowMachLookup"}, func(g *grammar, n *node) bool {
		return n.Kind == kindString && g.fast.mach.MatchString(n.Str)
	}},
	// [...#NonEmpty]
	{Path{"network", "stripResponseHeaders"}, plainNonEmpty},
	// #Host: =~#re.host; list.MinItems(1) reads the first element.
	{Path{"network", "mitmProxy", "domains"}, plainHost},
	// #Host; maskExcluded reads the list (see coverViews).
	{Path{"network", "tlsTerminate", "excludeDomains"}, plainHost},
	{Path{"network", "tlsTerminate", "extraCaCertPaths"}, plainNonEmpty},
	// #PathEntry: a non-empty string or a literal path object.
	// inertDenyGlob looks at deny strings ending in a separator.
	{Path{"filesystem", "denyRead"}, plainDenyPath},
	{Path{"filesystem", "denyWrite"}, plainDenyPath},
	{Path{"filesystem", "allowRead"}, plainPath},
	{Path{"filesystem", "allowWrite"}, plainPath},
	// [string]: [...string]
	{Path{"ignoreViolations", anyKey}, plainString},
	// [...string]
	{Path{"git", "safeDirectories"}, plainString},
	// #Host; injectCovered and maskExcluded read them (see coverViews).
	{Path{"credentials", "files", anyKey, "injectHosts"}, plainHost},
	{Path{"credentials", "envVars", anyKey, "injectHosts"}, plainHost},
}

func startsBracket(s string) bool { return len(s) > 0 && s[0] == '[' }

func plainString(g *grammar, n *node) bool { return n.Kind == kindString }

func plainNonEmpty(g *grammar, n *node) bool { return n.Kind == kindString && n.Str != "" }

func plainHost(g *grammar, n *node) bool {
	return n.Kind == kindString && g.fast.host.MatchString(n.Str)
}

// plainPath is a #PathEntry: a non-empty string, or #LiteralPath, an
// object of exactly a non-empty "path" and "literal": true.
func plainPath(g *grammar, n *node) bool {
	switch n.Kind {
	case kindString:
		return n.Str != ""
	case kindObject:
		if len(n.Fields) != 2 {
			return false
		}
		p, lit := n.get("path"), n.get("literal")
		return p != nil && p.Kind == kindString && p.Str != "" && lit != nil && lit.Kind == kindBool && lit.Bool
	}
	return false
}

func plainDenyPath(g *grammar, n *node) bool {
	return plainPath(g, n) && (n.Kind != kindString || !g.fast.trailing.MatchString(n.Str))
}

// fastRegexps are the regular expressions of settings.cue the plain checks
// use, compiled by Go's regexp package as CUE's =~ does.
type fastRegexps struct {
	allowEntry, denyEntry, trailing *regexp.Regexp
	host, mach, addrRange, mapped   *regexp.Regexp
	port                            *regexp.Regexp // "^:" + #re.port + "$", as #bracket writes it
	v4                              *regexp.Regexp // "^" + #re.v4 + "$", as #covered writes it
}

func compileFast(file cue.Value, os OS) fastRegexps {
	str := func(path string) string {
		s, err := file.LookupPath(cue.ParsePath(path)).String()
		if err != nil {
			panic("schema: settings.cue has no regular expression " + path + ": " + err.Error())
		}
		return s
	}
	re := func(path string) *regexp.Regexp { return regexp.MustCompile(str(path)) }
	return fastRegexps{
		allowEntry: re("#re.allowEntry"),
		denyEntry:  re("#re.denyEntry"),
		trailing:   re("#re.inert." + string(os) + ".trailing"),
		host:       re("#re.host"),
		mach:       re("#re.mach"),
		addrRange:  re("#re.range"),
		mapped:     re("#re.mapped"),
		port:       regexp.MustCompile("^:" + str("#re.port") + "$"),
		v4:         regexp.MustCompile("^" + str("#re.v4") + "$"),
	}
}

// matchPath returns the values at path, which may hold anyKey, below n.
func matchPath(n *node, path Path, out []*node) []*node {
	if n == nil {
		return out
	}
	if len(path) == 0 {
		return append(out, n)
	}
	if path[0] != anyKey {
		return matchPath(path[:1].lookup(n), path[1:], out)
	}
	switch n.Kind {
	case kindObject:
		for _, f := range n.Fields {
			out = matchPath(f.Value, path[1:], out)
		}
	case kindArray:
		for _, e := range n.Elems {
			out = matchPath(e, path[1:], out)
		}
	}
	return out
}

// plainViews returns, for each list of plainLists in the document, the
// indices of the elements the grammar is shown: the first, and those that
// are not plain.
func (l *loader) plainViews() map[*node][]int {
	if l.slow {
		return nil
	}
	views := map[*node][]int{}
	for _, pl := range plainLists {
		for _, n := range matchPath(l.root, pl.path, nil) {
			if n.Kind != kindArray {
				continue
			}
			idx := []int{}
			for i, e := range n.Elems {
				if i == 0 || !pl.plain(l.g, e) {
					idx = append(idx, i)
				}
			}
			views[n] = idx
		}
	}
	if cred := (Path{"credentials"}).lookup(l.root); cred != nil {
		l.coverViews(views)
	}
	return views
}

// coverViews narrows the views of the lists the coverage rules read when
// the document has credentials: injectCovered asks, of every inject host,
// whether allowedDomains covers it (#covered), and maskExcluded whether
// excludeDomains does, and whether it covers every allowed host.
//
// An inject host is plain when, besides matching #Host, it is covered by
// an allowed host and not by an excluded one, by the test of #covered
// (see coverIndex): no rule can report it. Of allowedDomains and
// excludeDomains, the grammar is shown, besides the elements the plain
// checks leave, every entry #covered may read for a host it is asked
// about (those equal to the host or to one of its suffixes after a
// dot): its answers are then those over the whole lists. For the question
// whether every allowed host is excluded, it is shown an allowed host
// that is not, when there is one.
//
// An entry with bodyInjectHosts has its injectHosts shown whole, and the
// entries of allowedDomains and excludeDomains #covered may read for
// each of those hosts.
//
// Where that reasoning does not hold (a newline in an entry, which makes
// #covered compare with every entry; every allowed host excluded), the
// three lists are shown whole.
func (l *loader) coverViews(views map[*node][]int) {
	allowedN := (Path{"network", "allowedDomains"}).lookup(l.root)
	excludedN := (Path{"network", "tlsTerminate", "excludeDomains"}).lookup(l.root)
	var injects []*node
	for _, key := range []string{"files", "envVars"} {
		for _, n := range matchPath(l.root, Path{"credentials", key, anyKey, "injectHosts"}, nil) {
			if n.Kind == kindArray {
				injects = append(injects, n)
			}
		}
	}
	whole := func() {
		for _, n := range append([]*node{allowedN, excludedN}, injects...) {
			delete(views, n)
		}
	}
	strs := func(n *node) []*node {
		if n == nil || n.Kind != kindArray {
			return nil
		}
		return n.Elems
	}
	// The hosts #Checks makes of allowedDomains (_allowedHosts): the
	// port-free host, or for an entry starting with "[" the host #bracket
	// finds inside.
	hosts := make([]string, len(strs(allowedN)))
	var allowed, excluded coverIndex
	for i, e := range strs(allowedN) {
		if e.Kind != kindString {
			continue
		}
		if strings.Contains(e.Str, "\n") {
			whole()
			return
		}
		if startsBracket(e.Str) {
			hosts[i] = l.g.bracketHost(e.Str)
		} else {
			hosts[i] = strings.SplitN(e.Str, ":", 2)[0]
		}
		allowed.add(hosts[i], i)
	}
	for i, e := range strs(excludedN) {
		if e.Kind != kindString {
			continue
		}
		if strings.Contains(e.Str, "\n") {
			whole()
			return
		}
		excluded.add(e.Str, i)
	}
	showAllowed := map[int]bool{}
	showExcluded := map[int]bool{}
	// bodyInjectCovered reads the whole injectHosts of an entry that has
	// bodyInjectHosts, and asks #covered of each of those hosts against
	// allowedDomains (without injectHosts) and excludeDomains
	// (bodyInjectExcluded).
	wholeInject := map[*node]bool{}
	for _, key := range []string{"files", "envVars"} {
		for _, entry := range matchPath(l.root, Path{"credentials", key, anyKey}, nil) {
			if entry.Kind != kindObject {
				continue
			}
			body := entry.get("bodyInjectHosts")
			if body == nil || body.Kind != kindArray {
				continue
			}
			if ih := entry.get("injectHosts"); ih != nil {
				wholeInject[ih] = true
			}
			for _, e := range body.Elems {
				if e.Kind != kindString {
					continue
				}
				if strings.Contains(e.Str, "\n") {
					whole()
					return
				}
				allowed.relevant(e.Str, showAllowed)
				excluded.relevant(e.Str, showExcluded)
			}
		}
	}
	for _, n := range injects {
		idx := []int{}
		for i, e := range n.Elems {
			plain := e.Kind == kindString && !strings.Contains(e.Str, "\n") && l.g.fast.host.MatchString(e.Str) &&
				allowed.covered(l.g, e.Str) && !excluded.covered(l.g, e.Str)
			if i > 0 && plain && !wholeInject[n] {
				continue
			}
			idx = append(idx, i)
			if e.Kind == kindString {
				allowed.relevant(e.Str, showAllowed)
				excluded.relevant(e.Str, showExcluded)
			}
		}
		views[n] = idx
	}
	if allowedN == nil || allowedN.Kind != kindArray {
		return
	}
	if len(strs(excludedN)) > 0 {
		witness := -1
		for i, e := range allowedN.Elems {
			if e.Kind == kindString && !excluded.covered(l.g, hosts[i]) {
				witness = i
				break
			}
		}
		if witness < 0 {
			whole()
			return
		}
		showAllowed[witness] = true
	}
	shown := map[int]bool{}
	for _, i := range views[allowedN] {
		shown[i] = true
	}
	for i := range showAllowed {
		shown[i] = true
	}
	idx := []int{}
	for i, e := range allowedN.Elems {
		if shown[i] {
			idx = append(idx, i)
			if e.Kind == kindString {
				excluded.relevant(hosts[i], showExcluded)
			}
		}
	}
	views[allowedN] = idx
	if excludedN != nil && excludedN.Kind == kindArray {
		for _, i := range views[excludedN] {
			showExcluded[i] = true
		}
		idx := []int{}
		for i := range excludedN.Elems {
			if showExcluded[i] {
				idx = append(idx, i)
			}
		}
		views[excludedN] = idx
	}
}

// bracketHost is the host #bracket finds in an entry starting with "[":
// the canonical text inside the brackets (#Facts.urlHost) when a "]"
// follows and what follows it is empty or ":port"; otherwise the entry.
func (g *grammar) bracketHost(entry string) string {
	parts := strings.SplitN(entry, "]", 2)
	if len(parts) == 2 && (parts[1] == "" || g.fast.port.MatchString(parts[1])) {
		return whatwg.BracketHost(strings.TrimPrefix(parts[0], "["))
	}
	return entry
}

// A coverIndex is a list of host patterns as #coverSet holds it: each
// entry lower-cased (names) and the ".Y" of each entry "*.Y" (bases), with
// the indices of the entries, for the test of #covered.
type coverIndex struct {
	names, bases map[string][]int
}

func (c *coverIndex) add(host string, i int) {
	if c.names == nil {
		c.names, c.bases = map[string][]int{}, map[string][]int{}
	}
	lb := strings.ToLower(host)
	c.names[lb] = append(c.names[lb], i)
	if strings.HasPrefix(lb, "*.") {
		c.bases[lb[1:]] = append(c.bases[lb[1:]], i)
	}
}

// covered is #covered's answer for x, which holds no newline, when no
// entry holds one: x equals an entry (unless x is a wildcard), or a
// suffix of x starting at a "." after its first label is the ".Y" of an
// entry "*.Y" (unless x is an IP literal and no wildcard).
func (c *coverIndex) covered(g *grammar, x string) bool {
	lx := strings.ToLower(x)
	wild := strings.HasPrefix(lx, "*.")
	ip := g.fast.v4.MatchString(lx) || strings.Contains(lx, ":") && g.fast.host.MatchString(lx)
	if !wild && len(c.names[lx]) > 0 {
		return true
	}
	if wild || !ip {
		for i := strings.IndexByte(lx, '.'); i >= 0; {
			if len(c.bases[lx[i:]]) > 0 {
				return true
			}
			j := strings.IndexByte(lx[i+1:], '.')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return false
}

// relevant adds to show the indices of every entry #covered may read to
// answer for x: those equal to x and those "*.Y" whose ".Y" ends x.
func (c *coverIndex) relevant(x string, show map[int]bool) {
	lx := strings.ToLower(x)
	for _, i := range c.names[lx] {
		show[i] = true
	}
	for i := 0; i < len(lx); i++ {
		if lx[i] == '.' {
			for _, k := range c.bases[lx[i:]] {
				show[k] = true
			}
		}
	}
}

// shown is the number of elements of array n the grammar is shown, and
// index the position in n of the k-th of them.
func (l *loader) shown(n *node) int {
	if v, ok := l.views[n]; ok {
		return len(v)
	}
	return len(n.Elems)
}

func (l *loader) index(n *node, k int) int {
	if v, ok := l.views[n]; ok && k < len(v) {
		return v[k]
	}
	return k
}

// docPath converts a path whose array indices count the shown elements
// (as #Checks numbers them) to a path in the document.
func (l *loader) docPath(p Path) Path {
	out := make(Path, 0, len(p))
	n := l.root
	for _, s := range p {
		if i, ok := s.(int); ok && n != nil && n.Kind == kindArray {
			s = l.index(n, i)
		}
		out = append(out, s)
		if n != nil {
			n = Path{s}.lookup(n)
		}
	}
	return out
}
