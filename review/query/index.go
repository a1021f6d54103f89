package query

import (
	"slices"
	"strings"
	"sync"

	"srt.dev/compiler/policy"
)

// The evaluator answers each question from indexes of the rule lists, not
// by reading every rule: explain asks about every rule, diff about every
// rule of two policies and a path below each, so reading every rule per
// question made them quadratic in the length of the lists.
//
// An index returns candidates: a superset of the rules of a list that may
// cover (or, for an allow on macOS, match) a path, in list order. The
// caller then asks the platform's own covers of each, exactly as it asked
// of every rule before, so an answer is the same rule as the linear
// reading gives, or the same verdict where only whether one exists
// matters. index_test.go checks the two readings agree on generated
// policies.
//
// How the superset is found: every path a rule can cover starts with the
// rule's static text (the literal text before its first wildcard, in the
// form the platform compares paths in), so the directory that text ends
// in is the path or one of its ancestors. A literal rule is filed under
// its path, a pattern under that base directory, and a question looks up
// the path and each ancestor (ancestors, the walk compiler.Covers makes).
// Patterns that share a base directory ("./**/*.pem", "./**/.env") are
// filed again under their last segment, which must match the last
// segment of the path or ancestor they match: by the segment itself, its
// text before the first wildcard, or its text after the last one. A rule
// whose key the index cannot derive is a candidate for every question.

// A keyed is where one spelling of a rule is filed.
type keyed struct {
	group int    // which form of the question the rule is compared with
	key   string // a literal rule's path, or a pattern's base directory
	// pattern is set for a pattern; seg is then its last segment.
	pattern bool
	seg     string
}

// An indexer is the part of a platform the indexes need.
type indexer interface {
	// keys returns where rule r is filed; ok is false when r must be a
	// candidate for every question, and an empty result with ok means r
	// covers nothing.
	keys(r policy.PathRule, allow bool) (ks []keyed, ok bool)
	// forms returns the question p in each group's form: forms[g] is ""
	// when no rule of group g can cover p.
	forms(p string) []string
}

// A ruleIndex files the rules of one list for one platform.
type ruleIndex struct {
	groups []map[string]*bucket // by group, then key
	always []int                // rules the index cannot place
}

// A bucket holds the rules filed under one key.
type bucket struct {
	literal []int // literal rules: cover the key and below
	// Patterns whose base directory is the key: by their last segment
	// when it has no wildcard, by the text before its first wildcard
	// (with the lengths of those texts), by the text after its last one,
	// or else rest.
	byName          map[string][]int
	byHead, byTail  map[string][]int
	headLen, tailLn []int
	rest            []int
}

// newIndex files the rules of l for pl.
func newIndex(pl indexer, l []policy.PathRule, allow bool) *ruleIndex {
	x := &ruleIndex{}
	for i, r := range l {
		ks, ok := pl.keys(r, allow)
		if !ok {
			x.always = append(x.always, i)
			continue
		}
		for _, k := range ks {
			for len(x.groups) <= k.group {
				x.groups = append(x.groups, map[string]*bucket{})
			}
			b := x.groups[k.group][k.key]
			if b == nil {
				b = &bucket{}
				x.groups[k.group][k.key] = b
			}
			b.add(i, k)
		}
	}
	return x
}

func (b *bucket) add(i int, k keyed) {
	if !k.pattern {
		b.literal = append(b.literal, i)
		return
	}
	seg := k.seg
	if seg == "" || strings.Contains(seg, "**") || strings.ContainsAny(seg, "[]/") {
		// "x**y" crosses separators on macOS; a set may hold "/".
		b.rest = append(b.rest, i)
		return
	}
	first, last := strings.IndexAny(seg, "*?"), strings.LastIndexAny(seg, "*?")
	add := func(m *map[string][]int, lens *[]int, key string) {
		if *m == nil {
			*m = map[string][]int{}
		}
		(*m)[key] = append((*m)[key], i)
		if lens != nil && !slices.Contains(*lens, len(key)) {
			*lens = append(*lens, len(key))
		}
	}
	switch {
	case first < 0:
		add(&b.byName, nil, seg)
	case first > 0:
		add(&b.byHead, &b.headLen, seg[:first])
	case last+1 < len(seg):
		add(&b.byTail, &b.tailLn, seg[last+1:])
	default:
		b.rest = append(b.rest, i)
	}
}

// candidates returns, in list order, the rules of the indexed list that
// may cover p.
func (x *ruleIndex) candidates(pl indexer, p string) []int {
	out := append([]int(nil), x.always...)
	if len(x.groups) > 0 {
		for g, q := range pl.forms(p) {
			if q == "" || g >= len(x.groups) || len(x.groups[g]) == 0 {
				continue
			}
			chain := ancestors(q)
			for k, a := range chain {
				b := x.groups[g][a]
				if b == nil {
					continue
				}
				out = append(out, b.literal...)
				out = append(out, b.rest...)
				// A pattern filed here matches a path strictly below a:
				// one of chain[:k], whose last segment its own matches.
				for _, below := range chain[:k] {
					out = b.bySegment(out, below[strings.LastIndexByte(below, '/')+1:])
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// bySegment appends the patterns of b whose last segment may match name.
func (b *bucket) bySegment(out []int, name string) []int {
	out = append(out, b.byName[name]...)
	for _, n := range b.headLen {
		if n <= len(name) {
			out = append(out, b.byHead[name[:n]]...)
		}
	}
	for _, n := range b.tailLn {
		if n <= len(name) {
			out = append(out, b.byTail[name[len(name)-n:]]...)
		}
	}
	return out
}

// ancestors are p and the directories above it, as compiler.Covers walks
// them: cut at the last "/" while one follows the first character, then
// "/" (which covers everything).
func ancestors(p string) []string {
	var out []string
	for a := p; ; {
		out = append(out, a)
		i := strings.LastIndexByte(a, '/')
		if i <= 0 {
			if a != "/" {
				out = append(out, "/")
			}
			return out
		}
		a = a[:i]
	}
}

// baseOf is the directory every path matching pattern text p (whose
// wildcards are the characters of metas at or after from) lies strictly
// below, or false when p has no such directory.
func baseOf(p string, from int) (string, bool) {
	static := p
	if i := strings.IndexAny(p[from:], "*?["); i >= 0 {
		static = p[:from+i]
	}
	j := strings.LastIndexByte(static, '/')
	switch {
	case j < 0:
		return "", false
	case j == 0:
		return "/", true
	}
	return static[:j], true
}

// lastSegment is the text after the last "/" of p, or "" when that "/"
// lies before from (in text that is not the pattern's).
func lastSegment(p string, from int) string {
	j := strings.LastIndexByte(p, '/')
	if j < from-1 {
		return ""
	}
	return p[j+1:]
}

// patternKey files a pattern p of group g whose wildcards start at from.
func patternKey(g int, p string, from int) ([]keyed, bool) {
	base, ok := baseOf(p, from)
	if !ok {
		return nil, false
	}
	return []keyed{{group: g, key: base, pattern: true, seg: lastSegment(p, from)}}, true
}

// indexes holds an evaluator's indexes, made on first use: by target, by
// list (the address of its first rule and its length) and by whether the
// rules are read as allows.
type indexes struct {
	mu   sync.Mutex
	byID map[indexID]*ruleIndex
	// derived lists, made once (see Evaluator.derived).
	lists map[string][]policy.PathRule
	// mac is the policy's Seatbelt program, made once (see
	// Evaluator.macProgram), and macOrigins the lists its answers rank
	// by (see Evaluator.macOrigins).
	mac        *macProgram
	macOrigins *macOrigins
	// scopes are the indexed inject scopes (see Evaluator.injectScope).
	scopes map[scopeID]scope
	// allowedHosts are the allowed hosts, each once, in order (see
	// Evaluator.InjectScope), made once.
	allowedHosts     []string
	allowedHostsMade bool
	// windows is the Windows plan's access-control program (see
	// windows.acl), made once.
	windows *winACL
}

type indexID struct {
	t     Target
	first *policy.PathRule
	n     int
	allow bool
}

// index returns the index of list l on platform t.
func (e *Evaluator) index(t Target, pl indexer, l []policy.PathRule, allow bool) *ruleIndex {
	id := indexID{t, &l[0], len(l), allow}
	x := e.idx
	if x == nil {
		return newIndex(pl, l, allow)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if ix, ok := x.byID[id]; ok {
		return ix
	}
	if x.byID == nil {
		x.byID = map[indexID]*ruleIndex{}
	}
	ix := newIndex(pl, l, allow)
	x.byID[id] = ix
	return ix
}

// derived returns the list called name, made by make on first use and
// kept, so that it is made once per evaluator and indexed once.
func (e *Evaluator) derived(name string, make func() []policy.PathRule) []policy.PathRule {
	x := e.idx
	if x == nil {
		return make()
	}
	x.mu.Lock()
	l, ok := x.lists[name]
	x.mu.Unlock()
	if ok {
		return l
	}
	l = make()
	x.mu.Lock()
	defer x.mu.Unlock()
	if prev, ok := x.lists[name]; ok {
		return prev
	}
	if x.lists == nil {
		x.lists = map[string][]policy.PathRule{}
	}
	x.lists[name] = l
	return l
}

// covering returns, in list order, the rules of l that may cover p on pl
// (as an allow on macOS, when allow is set): a superset, so ask pl.covers
// (or the allow's own match) of each.
func covering(pl platform, l []policy.PathRule, p string, allow bool) []int {
	if len(l) == 0 {
		return nil
	}
	if pl.evaluator().linear {
		out := make([]int, len(l))
		for i := range out {
			out[i] = i
		}
		return out
	}
	return pl.evaluator().index(pl.target(), pl, l, allow).candidates(pl, p)
}

// evaluator is the Evaluator behind a platform.
func (e *Evaluator) evaluator() *Evaluator { return e }
