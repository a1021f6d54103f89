package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// A pair is one substitution: every Old becomes New.
type pair struct{ Old, New []byte }

// replaceAll applies pairs to b left to right: at each position the
// earliest match wins (the first pair on a tie), and replaced text is
// never scanned again. It is the reference the streaming swapper must
// agree with.
func replaceAll(b []byte, pairs []pair) []byte {
	var out []byte
	i := 0
	for {
		j, k := nextMatch(b[i:], pairs)
		if k < 0 {
			return append(out, b[i:]...)
		}
		out = append(append(out, b[i:i+j]...), pairs[k].New...)
		i += j + len(pairs[k].Old)
	}
}

// nextMatch returns the offset and index of the earliest match in b, or
// -1, -1.
func nextMatch(b []byte, pairs []pair) (int, int) {
	best, which := -1, -1
	for k, p := range pairs {
		if len(p.Old) == 0 {
			continue
		}
		if j := bytes.Index(b, p.Old); j >= 0 && (best < 0 || j < best) {
			best, which = j, k
		}
	}
	return best, which
}

// swapReader streams r through the substitutions, holding back only the
// bytes at the end of what it has read that begin some Old: a streamed
// response (server-sent events) is passed on as it comes unless it stops
// in the middle of what may be a secret. A pair whose New is its Old
// only finds: with found set, the reader is a detector that passes the
// body on as it is and never holds it whole.
//
// Input is read straight into buf, and what holds no match is handed to
// the caller from there: two arrays take turns as buf and as out (spare
// is the one out will free), so that a body without a secret is copied
// no more than reading it takes.
type swapReader struct {
	r      io.Reader
	closer io.Closer
	pairs  []pair
	// mt finds the matches when it is set (many pairs), else nextMatch.
	mt *matcher
	// found, when set, is told the index of the pair of each match, as
	// the match is replaced.
	found func(k int)
	keep  int    // at most this many bytes may begin a match still to come
	buf   []byte // read, not yet scanned
	out   []byte // ready for the caller
	spare []byte // an array neither buf uses nor out will once it is read
	err   error
}

// swapRead is how much a swapReader asks its reader for at a time.
const swapRead = 32 << 10

func newSwapReader(rc io.ReadCloser, pairs []pair) io.ReadCloser {
	return newMatchingReader(rc, pairs, newMatcher(pairs))
}

// newMatchingReader is newSwapReader with the matches found by mt, a
// matcher of pairs.
func newMatchingReader(rc io.ReadCloser, pairs []pair, mt *matcher) io.ReadCloser {
	s := newFindingReader(rc, pairs, nil)
	s.mt = mt
	return s
}

// newFindingReader is newSwapReader that tells found of each match.
func newFindingReader(rc io.ReadCloser, pairs []pair, found func(k int)) *swapReader {
	longest := 0
	for _, p := range pairs {
		longest = max(longest, len(p.Old))
	}
	return &swapReader{r: rc, closer: rc, pairs: pairs, found: found, keep: max(longest-1, 0)}
}

func (s *swapReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.buf) > 0 {
				s.out, s.buf = s.buf, nil
				break
			}
			return 0, s.err
		}
		// out is read: no array but buf's and spare holds anything.
		if cap(s.buf)-len(s.buf) < swapRead/2 {
			s.buf = append(make([]byte, 0, len(s.buf)+swapRead), s.buf...)
		}
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		s.err = err
		s.scan()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// scan replaces every match that lies wholly in buf and moves what can no
// longer be part of a match to out. At the end of input everything goes.
func (s *swapReader) scan() {
	hold := len(s.buf)
	if s.err == nil {
		hold = s.partial()
	}
	// A match starting at or after hold may be cut short, or be preceded
	// by a longer one still to come: it waits for more input.
	j, k := s.next(s.buf)
	if k < 0 || j >= hold {
		// Nothing to replace: buf up to hold is out as it is, and what
		// is left goes to the spare array.
		s.out = s.buf[:hold]
		s.buf, s.spare = append(s.spare[:0], s.buf[hold:]...), s.buf[:0]
		return
	}
	out := s.spare[:0]
	i := 0
	for k >= 0 && i+j < hold {
		out = append(append(out, s.buf[i:i+j]...), s.pairs[k].New...)
		i += j + len(s.pairs[k].Old)
		if s.found != nil {
			s.found(k)
		}
		j, k = s.next(s.buf[i:])
	}
	if hold > i {
		out = append(out, s.buf[i:hold]...)
		i = hold
	}
	// buf's array is free once what is left of it has moved to its start.
	s.out, s.spare = out, out[:0]
	s.buf = s.buf[:copy(s.buf, s.buf[i:])]
}

// next finds the earliest match in b (nextMatch).
func (s *swapReader) next(b []byte) (int, int) {
	if s.mt != nil {
		return s.mt.next(b)
	}
	return nextMatch(b, s.pairs)
}

// partial returns where the earliest match that buf may hold only the
// start of begins (the end of buf when none): buf from there on is a
// proper prefix of some Old.
func (s *swapReader) partial() int {
	for p := max(len(s.buf)-s.keep, 0); p < len(s.buf); p++ {
		tail := s.buf[p:]
		for _, pr := range s.pairs {
			if len(tail) < len(pr.Old) && bytes.HasPrefix(pr.Old, tail) {
				return p
			}
		}
	}
	return len(s.buf)
}

func (s *swapReader) Close() error { return s.closer.Close() }

// swapHeader applies the pairs to every header value.
func swapHeader(h http.Header, pairs []pair) {
	for _, vs := range h {
		swapValues(vs, pairs)
	}
}

// swapValues applies the pairs to each value, in place.
func swapValues(vs []string, pairs []pair) {
	for i, v := range vs {
		for _, p := range pairs {
			if strings.Contains(v, string(p.Old)) {
				vs[i] = string(replaceAll([]byte(v), pairs))
				break
			}
		}
	}
}

// sameLengths reports whether every pair keeps the length (a body's
// Content-Length then still holds).
func sameLengths(pairs []pair) bool {
	for _, p := range pairs {
		if len(p.Old) != len(p.New) {
			return false
		}
	}
	return true
}
