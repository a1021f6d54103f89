package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// fuzzEgress allows only ok.test and records every name it is asked to
// resolve, and the violation line and explanation of every refusal (in
// shown); nothing is ever dialled.
func fuzzEgress(resolved, shown *[]string, mu *sync.Mutex) *Egress {
	allowed, _ := policy.ParseHostList([]string{"ok.test"})
	rules := &netpolicy.Rules{Allowed: allowed}
	return &Egress{
		OnDecision: func(v Event) {
			if !v.Allow {
				mu.Lock()
				*shown = append(*shown, v.Line(), v.Why)
				mu.Unlock()
			}
		},
		Token: "tok",
		Rules: func() *netpolicy.Rules { return rules },
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			*resolved = append(*resolved, host)
			mu.Unlock()
			return nil, errors.New("no lookups in fuzzing")
		},
		Dial: func(context.Context, netip.AddrPort) (net.Conn, error) { return nil, errors.New("no dials in fuzzing") },
	}
}

func checkResolved(t *testing.T, resolved []string) {
	for _, h := range resolved {
		if h != "ok.test" {
			t.Errorf("resolved %q, which no rule allows", h)
		}
	}
}

// checkShown fails on a refusal's text that carries a control, a line
// break, a format character or a byte that is not UTF-8 of what the
// client sent.
func checkShown(t *testing.T, shown []string) {
	for _, s := range shown {
		if !shownSafely(s) {
			t.Errorf("a refusal shows %q", s)
		}
	}
}

// FuzzSOCKS feeds arbitrary bytes to the SOCKS5 server: it must never
// panic or hang, never resolve a name the policy does not allow, and
// never show a byte of the name raw in a refusal's text.
func FuzzSOCKS(f *testing.F) {
	f.Add([]byte{0x05, 0x01, 0x02, 0x01, 0x03, 's', 'r', 't', 0x03, 't', 'o', 'k', 0x05, 0x01, 0x00, 0x03, 0x07, 'o', 'k', '.', 't', 'e', 's', 't', 0x01, 0xbb})
	f.Add([]byte{0x05, 0x01, 0x02, 0x01, 0x03, 's', 'r', 't', 0x03, 't', 'o', 'k', 0x05, 0x01, 0x00, 0x03, 0x08, 'e', 'v', 'i', 'l', '.', 'c', 'o', 'm', 0x00, 0x16})
	f.Add([]byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0, 22})
	f.Add([]byte("\x05\x01\x02\x01\x03srt\x03tok\x05\x01\x00\x03\x19\x1b[2K\rsrt: all clear\n\u202e.x\x01\xbb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var resolved, shown []string
		var mu sync.Mutex
		p := &SOCKS{Egress: fuzzEgress(&resolved, &shown, &mu)}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { p.handle(context.Background(), server); server.Close(); close(done) }()
		client.SetDeadline(time.Now().Add(2 * time.Second))
		go io.Copy(io.Discard, client)
		client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatal("the handler hung")
		}
		checkResolved(t, resolved)
		checkShown(t, shown)
	})
}

// FuzzHTTP feeds arbitrary bytes to the HTTP proxy: the same properties.
func FuzzHTTP(f *testing.F) {
	f.Add([]byte("CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test:443\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	f.Add([]byte("GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	f.Add([]byte("GET http://OK.test.:80/x HTTP/1.1\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	f.Add([]byte("CONNECT a%c2%9b2K\u202e%ff:443 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	var resolved, shown []string
	var mu sync.Mutex
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	go (&HTTP{Egress: fuzzEgress(&resolved, &shown, &mu)}).Serve(context.Background(), l)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
		c.Close()
		mu.Lock()
		checkResolved(t, resolved)
		checkShown(t, shown)
		shown = shown[:0]
		mu.Unlock()
	})
}
