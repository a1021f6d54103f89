package proxy

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzSwap checks the streaming swapper against replaceAll, whatever the
// sizes in which the input arrives.
func FuzzSwap(f *testing.F) {
	f.Add([]byte("Bearer fake_value_1234 and fake_value_1234"), "fake_value_1234", "REAL", "REAL", "fake", uint8(3))
	f.Add([]byte("aaaaab"), "aab", "X", "a", "YY", uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, old1, new1, old2, new2 string, chunk uint8) {
		pairs := []pair{{[]byte(old1), []byte(new1)}, {[]byte(old2), []byte(new2)}}
		want := replaceAll(in, pairs)
		var r io.Reader = bytes.NewReader(in)
		if chunk%2 == 0 {
			r = iotest.OneByteReader(r)
		} else {
			r = iotest.HalfReader(r)
		}
		got, err := io.ReadAll(newSwapReader(io.NopCloser(r), pairs))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("streamed %q, whole %q", got, want)
		}
	})
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
