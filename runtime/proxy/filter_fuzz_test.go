package proxy

import (
	"bufio"
	"bytes"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// FuzzFilterHead reads arbitrary bytes as a request head the way
// filtered mode does, and derives the target: nothing may panic, and a
// target always has a host, a port and a path.
func FuzzFilterHead(f *testing.F) {
	for _, s := range []string{
		"GET http://127.0.0.1:8080/ok?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
		"POST http://Example.COM./a/../b HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"GET http://u@h/ HTTP/1.0\r\n\r\n",
	} {
		f.Add([]byte(s), false)
	}
	allowed, _ := policy.ParseHostList([]string{"127.0.0.1", "example.com", "*.example.org"})
	rules := &netpolicy.Rules{Allowed: allowed}
	p := &HTTP{Egress: &Egress{Rules: func() *netpolicy.Rules { return rules }}}
	f.Fuzz(func(t *testing.T, in []byte, tunnel bool) {
		head, err := readHead(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		raw, _, err := parseHead(head)
		if err != nil {
			return
		}
		fc := &fconn{p: p}
		if tunnel {
			fc.tunnel = &tunnelTarget{host: "example.com", port: 443}
		}
		tg, r := fc.target(raw)
		if r != nil {
			return
		}
		if tg.path == "" {
			t.Fatalf("%q: empty path", in)
		}
		if tg.host == "" || tg.port < 1 || tg.port > 65535 {
			t.Fatalf("%q: target %+v", in, tg)
		}
	})
}
