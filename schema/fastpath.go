package schema

import (
	"regexp"

	"cuelang.org/go/cue"
)

// CUE costs tens of microseconds per list element, so a file of 180,000
// domains took seconds to validate although almost every entry is an
// ordinary host name. The loader therefore shows the grammar, of the lists
// below, only the elements it cannot vouch for:
// an element is plain when Go can tell, with the grammar's own regular
// expressions, that neither #Settings nor any rule of #Checks has anything
// to say about it. Every other element is shown to CUE with its own index,
// so the messages and positions are the grammar's.
//
// The grammar stays the one source of truth: the expressions are read from
// settings.cue when it is compiled, and the tests compare every diagnostic
// with and without this path (TestPlainAgrees, FuzzPlain) and fail when a
// rule of #Checks starts reading one of these lists
// (TestPlainListsRules).

// plainLists are the lists with a plain check: a document key path, and
// whether an element is plain for the grammar g.
var plainLists = []struct {
	path  Path
	plain func(g *grammar, n *node) bool
}{
	// #AllowEntry: =~#re.allowEntry. Entries starting with "[" are
	// split and checked again by bracketedAllow.
	{Path{"network", "allowedDomains"}, func(g *grammar, n *node) bool {
		return n.Kind == kindString && !startsBracket(n.Str) && g.fast.allowEntry.MatchString(n.Str)
	}},
	// #DenyEntry: =~#re.denyEntry; bracketedDeny as above.
	{Path{"network", "deniedDomains"}, func(g *grammar, n *node) bool {
		return n.Kind == kindString && !startsBracket(n.Str) && g.fast.denyEntry.MatchString(n.Str)
	}},
	// #PathEntry: a non-empty string. inertDenyGlob looks at deny
	// entries ending in a separator.
	{Path{"filesystem", "denyRead"}, plainDenyPath},
	{Path{"filesystem", "denyWrite"}, plainDenyPath},
	{Path{"filesystem", "allowRead"}, plainPath},
	{Path{"filesystem", "allowWrite"}, plainPath},
}

func startsBracket(s string) bool { return len(s) > 0 && s[0] == '[' }

func plainPath(g *grammar, n *node) bool { return n.Kind == kindString && n.Str != "" }

func plainDenyPath(g *grammar, n *node) bool {
	return plainPath(g, n) && !g.fast.trailing.MatchString(n.Str)
}

// fastRegexps are the regular expressions of settings.cue the plain checks
// use, compiled by Go's regexp package as CUE's =~ does.
type fastRegexps struct {
	allowEntry, denyEntry, trailing *regexp.Regexp
}

func compileFast(file cue.Value, os OS) fastRegexps {
	re := func(path string) *regexp.Regexp {
		s, err := file.LookupPath(cue.ParsePath(path)).String()
		if err != nil {
			panic("schema: settings.cue has no regular expression " + path + ": " + err.Error())
		}
		return regexp.MustCompile(s)
	}
	return fastRegexps{
		allowEntry: re("#re.allowEntry"),
		denyEntry:  re("#re.denyEntry"),
		trailing:   re("#re.inert." + string(os) + ".trailing"),
	}
}

// plainViews returns, for each list of plainLists in the document, the
// indices of the elements the grammar is shown: those that are not plain. allowedDomains is shown whole
// when the document has credentials: their rules compare inject hosts
// with every allowed host.
func (l *loader) plainViews() map[*node][]int {
	if l.slow {
		return nil
	}
	views := map[*node][]int{}
	for _, pl := range plainLists {
		n := pl.path.lookup(l.root)
		if n == nil || n.Kind != kindArray {
			continue
		}
		if pl.path[1] == "allowedDomains" && (Path{"credentials"}).lookup(l.root) != nil {
			continue
		}
		idx := []int{}
		for i, e := range n.Elems {
			if !pl.plain(l.g, e) {
				idx = append(idx, i)
			}
		}
		views[n] = idx
	}
	return views
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
