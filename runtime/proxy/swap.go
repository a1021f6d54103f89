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
// in the middle of what may be a secret.
type swapReader struct {
	r       io.Reader
	closer  io.Closer
	pairs   []pair
	keep    int    // at most this many bytes may begin a match still to come
	buf     []byte // read, not yet scanned past i
	out     []byte // ready for the caller
	err     error
	scratch []byte
}

func newSwapReader(rc io.ReadCloser, pairs []pair) io.ReadCloser {
	longest := 0
	for _, p := range pairs {
		longest = max(longest, len(p.Old))
	}
	return &swapReader{r: rc, closer: rc, pairs: pairs, keep: max(longest-1, 0), scratch: make([]byte, 32<<10)}
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
		n, err := s.r.Read(s.scratch)
		s.buf = append(s.buf, s.scratch[:n]...)
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
	var out []byte
	hold := len(s.buf)
	if s.err == nil {
		hold = s.partial()
	}
	i := 0
	for {
		// A match starting at or after hold may be cut short, or be
		// preceded by a longer one still to come: it waits for more input.
		j, k := nextMatch(s.buf[i:], s.pairs)
		if k < 0 || i+j >= hold {
			break
		}
		out = append(append(out, s.buf[i:i+j]...), s.pairs[k].New...)
		i += j + len(s.pairs[k].Old)
	}
	if hold > i {
		out = append(out, s.buf[i:hold]...)
		i = hold
	}
	s.out = out
	s.buf = append(s.buf[:0:0], s.buf[i:]...)
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
	for name, vs := range h {
		for i, v := range vs {
			for _, p := range pairs {
				if strings.Contains(v, string(p.Old)) {
					v = string(replaceAll([]byte(v), pairs))
					vs[i] = v
					break
				}
			}
		}
		h[name] = vs
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
