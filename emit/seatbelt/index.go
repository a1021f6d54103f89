package seatbelt

import (
	"sort"
	"strings"
)

// An otherIndex holds the entries a deny is carved by (see carve), so that
// carve looks at the entries it may subtract instead of every entry.
// Entries from another root than the deny are all looked at (whether the
// deny covers one is a fact of the host, and each becomes a carve
// parameter, see mayCover); of the entries from the deny's own root, only
// those whose sample starts with the deny's base directory (a pattern) or
// the deny itself (a literal path): its regex, or "inside", can match no
// other. The answer for each entry looked at is carve's own, and the
// entries are taken in their order, so the profile is the same as when
// every entry is looked at (the emitter's linear mode, which
// TestIndexedCarveAgrees compares it with).
type otherIndex struct {
	es     []entry
	linear bool
	// byRoot holds the indices of the entries of each root, in order;
	// sorted the same ordered by sample, and samples their samples.
	byRoot  map[string][]int
	sorted  map[string][]int
	samples []string
}

func newOtherIndex(es []entry, linear bool) *otherIndex {
	ix := &otherIndex{es: es, linear: linear, byRoot: map[string][]int{}, sorted: map[string][]int{}}
	if linear {
		return ix
	}
	ix.samples = make([]string, len(es))
	for i, e := range es {
		ix.samples[i] = e.sample()
		ix.byRoot[e.root] = append(ix.byRoot[e.root], i)
	}
	for root, idx := range ix.byRoot {
		s := append([]int(nil), idx...)
		sort.SliceStable(s, func(a, b int) bool { return ix.samples[s[a]] < ix.samples[s[b]] })
		ix.sorted[root] = s
	}
	return ix
}

// candidates are the indices, in order, of the entries carve looks at for
// deny d.
func (ix *otherIndex) candidates(d entry) []int {
	if ix.linear {
		out := make([]int, len(ix.es))
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for root, idx := range ix.byRoot {
		if root != d.root {
			out = append(out, idx...)
		}
	}
	prefix := d.spelling()
	if d.glob() {
		prefix = d.base()
	}
	same := ix.sorted[d.root]
	if d.root == "" && prefix == "/" {
		out = append(out, same...) // "/" is inside nothing, and a pattern at "/" may match anything
	} else {
		lo := sort.Search(len(same), func(k int) bool { return ix.samples[same[k]] >= prefix })
		for k := lo; k < len(same) && strings.HasPrefix(ix.samples[same[k]], prefix); k++ {
			out = append(out, same[k])
		}
	}
	sort.Ints(out)
	return out
}

// literalPieces are texts every path deny pattern d matches contains, on
// a host where d's root is any directory: its literal text, and the runs
// of its glob between separators, wildcards and bracket sets (a bracket
// is skipped up to the next "]": the text of an invalid set, which is
// literal, is left out).
func literalPieces(d entry) []string {
	var out []string
	if d.lit != "" {
		out = append(out, d.lit)
	}
	start := -1
	flush := func(i int) {
		if start >= 0 && i > start {
			out = append(out, d.pat[start:i])
		}
		start = -1
	}
	for i := 0; i < len(d.pat); i++ {
		switch c := d.pat[i]; c {
		case '*', '?', '/', ']':
			flush(i)
		case '[':
			flush(i)
			if end := strings.IndexByte(d.pat[i+1:], ']'); end >= 0 {
				i += end + 1
			} else {
				i = len(d.pat)
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(d.pat))
	return out
}

// mayContain reports whether sample s contains every literal piece of d:
// otherwise d's regex cannot match it (see mayCover).
func mayContain(pieces []string, s string) bool {
	for _, p := range pieces {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// An allowSet holds the literal allows late compares a literal deny with:
// a deny is re-emitted when one of them is it or an ancestor (see relate).
type allowSet struct {
	linear bool
	lits   map[string]bool
}

func newAllowSet(allows []entry, linear bool) *allowSet {
	s := &allowSet{linear: linear, lits: map[string]bool{}}
	for _, a := range allows {
		if !a.glob() {
			s.lits[a.spelling()] = true
		}
	}
	return s
}

// inside reports whether literal path p lies strictly inside a literal
// allow: "/", or one of p's ancestors written from p's root.
func (s *allowSet) inside(p string) bool {
	if p != "/" && s.lits["/"] {
		return true
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' && s.lits[p[:i]] && relate(p, p[:i]) == inside {
			return true
		}
	}
	return false
}
