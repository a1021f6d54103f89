package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzSwap checks the streaming swapper against replaceAll, whatever the
// sizes in which the input arrives: the same output, and the same
// matches told to found, in order. A pair whose New is its Old (chunk's
// bit 1: found, not swapped, as a stand-in in a body that gets no real
// value) leaves the input as it is.
func FuzzSwap(f *testing.F) {
	f.Add([]byte("Bearer fake_value_1234 and fake_value_1234"), "fake_value_1234", "REAL", "REAL", "fake", uint8(3))
	f.Add([]byte("aaaaab"), "aab", "X", "a", "YY", uint8(1))
	f.Add([]byte("token=fake_value_1234&x=fake_value_1234"), "fake_value_1234", "", "x=", "", uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, old1, new1, old2, new2 string, chunk uint8) {
		pairs := []pair{{[]byte(old1), []byte(new1)}, {[]byte(old2), []byte(new2)}}
		if chunk&2 != 0 {
			pairs[0].New = pairs[0].Old
		}
		want, wantFound := replaceAll(in, pairs), matchesOf(in, pairs)
		var r io.Reader = bytes.NewReader(in)
		if chunk%2 == 0 {
			r = iotest.OneByteReader(r)
		} else {
			r = iotest.HalfReader(r)
		}
		var found []int
		got, err := io.ReadAll(newFindingReader(io.NopCloser(r), pairs, func(k int) { found = append(found, k) }))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("streamed %q, whole %q", got, want)
		}
		if fmt.Sprint(found) != fmt.Sprint(wantFound) {
			t.Fatalf("found %v, want %v", found, wantFound)
		}
		// The same through the one-pass matcher, when the patterns are
		// long enough for one.
		if w := min(len(old1), len(old2)); w >= 3 {
			mt := buildMatcher(pairs, min(w, maxWindow))
			got, err := io.ReadAll(newMatchingReader(io.NopCloser(iotest.HalfReader(bytes.NewReader(in))), pairs, mt))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("streamed through the matcher %q, %v; whole %q", got, err, want)
			}
		}
		if chunk&2 != 0 && len(old2) == 0 && !bytes.Equal(got, in) {
			t.Fatalf("a pair that only finds changed %q to %q", in, got)
		}
	})
}

// matchesOf is the pair of each replacement replaceAll makes in b, in
// order.
func matchesOf(b []byte, pairs []pair) []int {
	var out []int
	for i := 0; ; {
		j, k := nextMatch(b[i:], pairs)
		if k < 0 {
			return out
		}
		out = append(out, k)
		i += j + len(pairs[k].Old)
	}
}

// FuzzPeek sends arbitrary first bytes into a tunnel that would be
// terminated: what is not a ClientHello must reach the upstream unchanged
// (an opaque tunnel, here to an echo server), and nothing may hang.
func FuzzPeek(f *testing.F) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
				closeWrite(c)
			}()
		}
	}()
	tb := newTLSBed(f, echo)
	tb.upAddr = l.Addr().String()
	tb.term.HandshakeTimeout = func() time.Duration { return 300 * time.Millisecond }
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0, 0, 1, 0})
	f.Add([]byte{0x16, 0x03, 0x04})
	f.Add([]byte{0x16})
	f.Fuzz(func(t *testing.T, in []byte) {
		c, br, err := connectThrough(tb.proxyAddr, "echo.test:7")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(in)
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(br)
		if err != nil && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("%v after %q", err, got)
		}
		if len(in) > 0 && !isClientHello(in) && len(in) >= 3 && !bytes.Equal(got, in) {
			t.Fatalf("opaque tunnel echoed %q for %q", got, in)
		}
	})
}

// FuzzMatcher checks the one-pass matcher against nextMatch: at every
// offset of the text, the same earliest match and the same pair. The
// patterns are cut from the text itself (so that they are met) and from
// the other inputs.
func FuzzMatcher(f *testing.F) {
	f.Add([]byte("xxabcabdabcabcyy"), "abcab", "bcabc", "cab", uint8(2), uint8(5))
	f.Add([]byte("0123456789abcdef0123456789abcdef"), "3456", "cdef0", "89ab", uint8(7), uint8(4))
	f.Fuzz(func(t *testing.T, text []byte, a, b, c string, at, n uint8) {
		cut := ""
		if len(text) > 0 {
			from := int(at) % len(text)
			cut = string(text[from:min(len(text), from+int(n))])
		}
		pairs := []pair{{Old: []byte(a)}, {Old: []byte(cut)}, {Old: []byte(b)}, {Old: []byte(c)}}
		window := 0
		for _, p := range pairs {
			if len(p.Old) > 0 && (window == 0 || len(p.Old) < window) {
				window = len(p.Old)
			}
		}
		if window < 3 {
			return
		}
		mt := buildMatcher(pairs, min(window, maxWindow))
		for i := 0; i <= len(text); i++ {
			j1, k1 := nextMatch(text[i:], pairs)
			j2, k2 := mt.next(text[i:])
			if j1 != j2 || k1 != k2 {
				t.Fatalf("at %d of %q, patterns %q: matcher (%d, %d), nextMatch (%d, %d)", i, text, []string{a, cut, b, c}, j2, k2, j1, k1)
			}
		}
	})
}
