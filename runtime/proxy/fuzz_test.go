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
// resolve; nothing is ever dialled.
func fuzzEgress(resolved *[]string, mu *sync.Mutex) *Egress {
	allowed, _ := policy.ParseHostList([]string{"ok.test"})
	rules := &netpolicy.Rules{Allowed: allowed}
	return &Egress{
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

// FuzzSOCKS feeds arbitrary bytes to the SOCKS5 server: it must never
// panic or hang, and never resolve a name the policy does not allow.
func FuzzSOCKS(f *testing.F) {
	f.Add([]byte{0x05, 0x01, 0x02, 0x01, 0x03, 's', 'r', 't', 0x03, 't', 'o', 'k', 0x05, 0x01, 0x00, 0x03, 0x07, 'o', 'k', '.', 't', 'e', 's', 't', 0x01, 0xbb})
	f.Add([]byte{0x05, 0x01, 0x02, 0x01, 0x03, 's', 'r', 't', 0x03, 't', 'o', 'k', 0x05, 0x01, 0x00, 0x03, 0x08, 'e', 'v', 'i', 'l', '.', 'c', 'o', 'm', 0x00, 0x16})
	f.Add([]byte{0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0, 22})
	f.Fuzz(func(t *testing.T, data []byte) {
		var resolved []string
		var mu sync.Mutex
		p := &SOCKS{Egress: fuzzEgress(&resolved, &mu)}
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
	})
}

// FuzzHTTP feeds arbitrary bytes to the HTTP proxy: the same properties.
func FuzzHTTP(f *testing.F) {
	f.Add([]byte("CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test:443\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	f.Add([]byte("GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	f.Add([]byte("GET http://OK.test.:80/x HTTP/1.1\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n"))
	var resolved []string
	var mu sync.Mutex
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	go (&HTTP{Egress: fuzzEgress(&resolved, &mu)}).Serve(context.Background(), l)
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
		mu.Unlock()
	})
}
