package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
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

// FuzzInjectRequest feeds arbitrary requests to the swap of real values
// into a request to an inject host: the real value leaves only in the
// header fields that carry credentials (carriesCredential), and in the
// body and every other field only when the host may receive it there
// (bodyInjectHosts; chunk's bit 0); never in the URL. Each stand-in left
// in place is told once per place, and its explanation shows the header
// name the command chose safely.
func FuzzInjectRequest(f *testing.F) {
	f.Add([]byte("PUT /o/k?t=fake_value_1234 HTTP/1.1\r\nHost: store.test\r\nAuthorization: Bearer fake_value_1234\r\nX-Amz-Meta-Token: fake_value_1234\r\nContent-Length: 15\r\n\r\nfake_value_1234"), uint8(0))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: store.test\r\nX-Api-Key: fake_value_1234\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfake_\r\na\r\nvalue_1234\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: store.test\r\nX-\x1b[2K: fake_value_1234\r\n\r\n"), uint8(0))
	const sentinel, real = "fake_value_1234", "REAL-SECRET-xyz"
	f.Fuzz(func(t *testing.T, raw []byte, chunk uint8) {
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		anywhere := chunk&1 != 0
		s := &Secret{Name: "T", Setting: "credentials.envVars[0]", Sentinel: sentinel, Real: real}
		var left []leftStandIn
		swapRequest(r, []swap{{pair{[]byte(sentinel), []byte(real)}, s, anywhere}}, func(l leftStandIn) { left = append(left, l) })
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(r.URL.RequestURI(), real) {
			t.Errorf("the real value went into the URL %q", r.URL.RequestURI())
		}
		if !anywhere && bytes.Contains(body, []byte(real)) && !bytes.Contains(raw, []byte(real)) {
			t.Errorf("the real value went into the body %q", body)
		}
		for name, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, real) && !anywhere && !carriesCredential(name) && !bytes.Contains(raw, []byte(real)) {
					t.Errorf("the real value went into %s: %q", name, v)
				}
			}
		}
		seen := map[string]bool{}
		for _, l := range left {
			if seen[l.place+"\x00"+l.header] {
				t.Errorf("told twice: %+v", l)
			}
			seen[l.place+"\x00"+l.header] = true
			if anywhere && l.place != inURL {
				t.Errorf("told of %+v, which may take the real value", l)
			}
			for _, s := range []string{l.reason(), l.explain("s.json", "store.test", 443)} {
				if !shownSafely(s) {
					t.Errorf("shown unsafely: %q", s)
				}
			}
		}
	})
}

// FuzzMatcher checks the one-pass matcher against nextMatch: from the
// start of the text and from one past each match, the same earliest
// match and the same pair. The
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
		// From the start, and from one past each match found: every match,
		// overlapping ones included.
		for i := 0; i <= len(text); {
			j1, k1 := nextMatch(text[i:], pairs)
			j2, k2 := mt.next(text[i:])
			if j1 != j2 || k1 != k2 {
				t.Fatalf("at %d of %q, patterns %q: matcher (%d, %d), nextMatch (%d, %d)", i, text, []string{a, cut, b, c}, j2, k2, j1, k1)
			}
			if k1 < 0 {
				break
			}
			i += j1 + 1
		}
	})
}
