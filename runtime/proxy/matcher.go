package proxy

import "bytes"

// A matcher finds what nextMatch finds (the earliest match of some Old
// of its pairs in a text, the first pair on a tie) in one pass over the
// text, however many pairs there are: a response read whole is searched
// for a real value and its re-encoded forms at once (encodedForms), not
// once per form.
//
// It is Wu and Manber's multi-pattern search ("A fast algorithm for
// multi-pattern searching", TR-94-17, 1994): a window as long as the
// shortest pattern (at most maxWindow bytes) slides over the text; the
// block of two bytes that ends it says how far it may slide without
// passing the end of any pattern's first window bytes (shift); where it
// may not slide, the patterns whose first window bytes end in that block
// are compared there. Blocks are hashed into blockHash entries (a shift
// is the least of the blocks sharing an entry), so that the table stays
// in the processor's first cache.
type matcher struct {
	pairs  []pair
	window int
	shift  [blockHash]uint8
	// ends lists, by block hash, the pairs whose first window bytes end
	// in a block of that hash, in pair order.
	ends map[uint16][]int
}

const (
	blockHash = 1 << 12
	maxWindow = 64
	// minMatcher is the fewest patterns a matcher is made for: fewer are
	// found faster by bytes.Index (nextMatch), which skips with the
	// processor's vector instructions.
	minMatcher = 3
)

// block is the hash of the three bytes that end at b[i].
func block(b []byte, i int) uint16 {
	return uint16((uint32(b[i-2])<<16 | uint32(b[i-1])<<8 | uint32(b[i])) * 0x9e3779b1 >> (32 - 12))
}

// newMatcher returns a matcher for pairs, or nil when nextMatch serves
// better: fewer than minMatcher patterns, or one shorter than 3 bytes
// (the windows would slide by too little). Empty patterns never match.
func newMatcher(pairs []pair) *matcher {
	n, window := 0, maxWindow
	for _, p := range pairs {
		if len(p.Old) > 0 {
			n++
			window = min(window, len(p.Old))
		}
	}
	if n < minMatcher || window < 3 {
		return nil
	}
	return buildMatcher(pairs, window)
}

// buildMatcher makes the matcher of pairs for windows of window bytes
// (3 or more, no more than the shortest non-empty pattern).
func buildMatcher(pairs []pair, window int) *matcher {
	mt := &matcher{pairs: pairs, window: window, ends: map[uint16][]int{}}
	for i := range mt.shift {
		mt.shift[i] = uint8(window - 2)
	}
	for k, p := range pairs {
		if len(p.Old) == 0 {
			continue
		}
		for j := 2; j < window; j++ {
			h := block(p.Old, j)
			mt.shift[h] = min(mt.shift[h], uint8(window-1-j))
		}
		h := block(p.Old, window-1)
		mt.ends[h] = append(mt.ends[h], k)
	}
	return mt
}

// next is nextMatch(b, mt.pairs).
func (mt *matcher) next(b []byte) (int, int) {
	w := mt.window
	for i := w - 1; i < len(b); {
		h := block(b, i)
		if s := mt.shift[h]; s > 0 {
			i += int(s)
			continue
		}
		start := i - w + 1
		for _, k := range mt.ends[h] {
			if bytes.HasPrefix(b[start:], mt.pairs[k].Old) {
				return start, k
			}
		}
		i++
	}
	return -1, -1
}
