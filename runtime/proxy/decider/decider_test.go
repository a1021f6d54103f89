package decider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"allow", `{"t":"verdict","id":1,"action":"allow"}`, true},
		{"allow edits", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-a":"1\tb"},"removeHeaders":["cookie"],"cred":"github","credential":"tok"}`, true},
		{"setHeaders list", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":["v1","v2"],"x-b":"1"}}`, true},
		{"setHeaders list of one", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":["v1"]}}`, true},
		{"setHeaders empty list", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":[]}}`, false},
		{"setHeaders list with a number", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":["v1",2]}}`, false},
		{"setHeaders list with a list", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":[["v1"]]}}`, false},
		{"setHeaders number", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":1}}`, false},
		{"setHeaders list control char", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":["ok","a\r\nb: c"]}}`, false},
		{"setHeaders list null", `{"t":"verdict","id":2,"action":"allow","setHeaders":{"x-added":["ok",null]}}`, false},
		{"deny", `{"t":"verdict","id":1,"action":"deny","status":451,"reason":"not here"}`, true},
		{"need_body", `{"t":"verdict","id":1,"action":"need_body","max":10}`, true},
		{"null", `{"t":"verdict","id":1,"action":"allow","setHeaders":null}`, false},
		{"null in array", `{"t":"verdict","id":1,"action":"allow","removeHeaders":[null]}`, false},
		{"duplicate key", `{"t":"verdict","id":1,"id":1,"action":"allow"}`, false},
		{"duplicate nested key", `{"t":"verdict","id":1,"action":"allow","setHeaders":{"x-a":"1","x-a":"2"}}`, false},
		{"unknown field", `{"t":"verdict","id":1,"action":"allow","x":1}`, false},
		{"field by another case", `{"t":"verdict","ID":1,"action":"allow"}`, false},
		{"field of another action", `{"t":"verdict","id":1,"action":"allow","status":403}`, false},
		{"empty setHeaders", `{"t":"verdict","id":1,"action":"allow","setHeaders":{}}`, false},
		{"empty removeHeaders", `{"t":"verdict","id":1,"action":"allow","removeHeaders":[]}`, false},
		{"upper-case header", `{"t":"verdict","id":1,"action":"allow","setHeaders":{"X-A":"1"}}`, false},
		{"framing header", `{"t":"verdict","id":1,"action":"allow","setHeaders":{"content-length":"1"}}`, false},
		{"control char", `{"t":"verdict","id":1,"action":"allow","setHeaders":{"x-a":"a\r\nb: c"}}`, false},
		{"cred alone", `{"t":"verdict","id":1,"action":"allow","cred":"github"}`, false},
		{"status low", `{"t":"verdict","id":1,"action":"deny","status":399}`, false},
		{"status missing", `{"t":"verdict","id":1,"action":"deny"}`, false},
		{"empty reason", `{"t":"verdict","id":1,"action":"deny","status":403,"reason":""}`, false},
		{"reason newline", `{"t":"verdict","id":1,"action":"deny","status":403,"reason":"a\nb"}`, false},
		{"max zero", `{"t":"verdict","id":1,"action":"need_body","max":0}`, false},
		{"max too big", `{"t":"verdict","id":1,"action":"need_body","max":33554433}`, false},
		{"id zero", `{"t":"verdict","id":0,"action":"allow"}`, false},
		{"id fraction", `{"t":"verdict","id":1.5,"action":"allow"}`, false},
		{"id string", `{"t":"verdict","id":"1","action":"allow"}`, false},
		{"unknown action", `{"t":"verdict","id":1,"action":"maybe"}`, false},
		{"wrong type", `{"t":"hello","id":1,"action":"allow"}`, false},
		{"trailing data", `{"t":"verdict","id":1,"action":"allow"} {}`, false},
		{"not an object", `[1]`, false},
		{"bad utf-8", "{\"t\":\"verdict\",\"id\":1,\"action\":\"deny\",\"status\":403,\"reason\":\"\xff\"}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVerdict([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("ParseVerdict(%s) = %v, want ok=%v", tc.in, err, tc.ok)
			}
		})
	}
}

func TestParseHello(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"t":"hello","proto":1,"allowedDomains":["example.com","*.good.org","127.0.0.1:8080","[::1]","localhost"]}`, true},
		{`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":["*","*:22"]}`, true},
		{`{"t":"hello","proto":2,"allowedDomains":[]}`, false},
		{`{"t":"hello","proto":1}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[]}`, true},
		{`{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":[]}`, true},
		{`{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":{}}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":null}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":[""]}`, false},
		{`{"t":"hello","proto":1,"deniedDomains":[]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["*"]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["*.com"]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["vm"]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["http://example.com"]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["example.com:0"]}`, false},
		{`{"t":"hello","proto":1,"allowedDomains":["::1"]}`, false},
	} {
		if _, err := ParseHello([]byte(tc.in)); (err == nil) != tc.ok {
			t.Errorf("ParseHello(%s) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

// TestFramesWritten: what a Go decider sends is what the protocol
// shows, both lists in the hello, a header's one value as a string.
func TestFramesWritten(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{Hello{AllowedDomains: []string{"example.com"}}, `{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":[]}`},
		{Hello{DeniedDomains: []string{"*"}}, `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":["*"]}`},
		{Verdict{ID: 4, Action: ActionAllow, SetHeaders: map[string][]string{"x-a": {"1"}, "x-b": {"1", "2"}}},
			`{"t":"verdict","id":4,"action":"allow","setHeaders":{"x-a":"1","x-b":["1","2"]}}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
	v, err := ParseVerdict([]byte(`{"t":"verdict","id":4,"action":"allow","setHeaders":{"x-a":"1","x-b":["1","2"]}}`))
	if err != nil || len(v.SetHeaders) != 2 || strings.Join(v.SetHeaders["x-a"], ",") != "1" || strings.Join(v.SetHeaders["x-b"], ",") != "1,2" {
		t.Errorf("ParseVerdict = %+v, %v", v, err)
	}
}

func TestReqFrame(t *testing.T) {
	b, _ := json.Marshal(Req{ID: 1, Method: "GET", Host: "127.0.0.1", Port: 8080, HostHeader: "127.0.0.1:8080", Path: "/ok", Query: "x=1"})
	want := `{"t":"req","id":1,"method":"GET","host":"127.0.0.1","port":8080,"hostHeader":"127.0.0.1:8080","path":"/ok","query":"x=1"}`
	if string(b) != want {
		t.Fatalf("req frame = %s, want %s", b, want)
	}
	r, err := ParseReq(b)
	if err != nil || r.Query != "x=1" {
		t.Fatalf("ParseReq = %+v, %v", r, err)
	}
	b, _ = json.Marshal(Body{ID: 3, Data: []byte("hi"), Cut: true})
	if string(b) != `{"t":"body","id":3,"data":"aGk=","cut":true}` {
		t.Fatalf("body frame = %s", b)
	}
}

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	WriteFrame(&buf, []byte("abc"))
	if got := buf.Bytes(); !bytes.Equal(got, []byte{0, 0, 0, 3, 'a', 'b', 'c'}) {
		t.Fatalf("frame = % x", got)
	}
	if b, err := ReadFrame(&buf, 10); err != nil || string(b) != "abc" {
		t.Fatalf("ReadFrame = %q, %v", b, err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 11}), 10); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("ReadFrame over the cap = %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 5, 'a'}), 10); err != io.ErrUnexpectedEOF {
		t.Fatalf("ReadFrame cut short = %v", err)
	}
}

// fakeDecider is the decider's end of a link in memory.
func fakeDecider(t *testing.T, hello string) (*Link, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		l   *Link
		err error
	}
	ch := make(chan res, 1)
	go func() { l, _, err := Open(p, p); ch <- res{l, err} }()
	if b, err := ReadFrame(d, MaxFrame); err != nil || string(b) != string(ProxyHello) {
		t.Fatalf("proxy hello = %q, %v", b, err)
	}
	WriteFrame(d, []byte(hello))
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { d.Close(); p.Close(); r.l.Close() })
	return r.l, d
}

func TestLink(t *testing.T) {
	l, d := fakeDecider(t, `{"t":"hello","proto":1,"allowedDomains":["example.com"]}`)
	l.Timeout = 50 * time.Millisecond
	// The first request times out; its late verdict is ignored, and the
	// second is answered.
	if _, err := l.Ask(context.Background(), Req{Method: "GET", Host: "example.com", Port: 80, Path: "/"}); err != ErrTimeout {
		t.Fatalf("Ask without a verdict = %v, want ErrTimeout", err)
	}
	got := make(chan Verdict, 1)
	go func() {
		v, err := l.Ask(context.Background(), Req{Method: "GET", Host: "example.com", Port: 80, Path: "/"})
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	ReadFrame(d, MaxFrame)         // req 1
	b, _ := ReadFrame(d, MaxFrame) // req 2
	if r, err := ParseReq(b); err != nil || r.ID != 2 {
		t.Fatalf("second req = %s, %v", b, err)
	}
	l.Timeout = time.Minute
	WriteFrame(d, []byte(`{"t":"verdict","id":1,"action":"allow"}`))
	WriteFrame(d, []byte(`{"t":"verdict","id":2,"action":"deny","status":403}`))
	if v := <-got; v.Action != ActionDeny {
		t.Fatalf("verdict = %+v", v)
	}
	// A verdict for an id never sent ends the link.
	WriteFrame(d, []byte(`{"t":"verdict","id":9,"action":"allow"}`))
	<-l.Done()
	if err := l.Err(); err == nil || !strings.Contains(err.Error(), "never sent") {
		t.Fatalf("Err = %v", err)
	}
	if _, err := l.Ask(context.Background(), Req{Method: "GET", Host: "example.com", Port: 80, Path: "/"}); err == nil {
		t.Fatal("Ask on a dead link succeeded")
	}
}

// TestLinkStalledDecider: a decider that stops reading fills the socket;
// every request still ends when its time is up.
func TestLinkStalledDecider(t *testing.T) {
	l, _ := fakeDecider(t, `{"t":"hello","proto":1,"allowedDomains":["example.com"]}`)
	l.Timeout = 50 * time.Millisecond
	big := Req{Method: "GET", Host: "example.com", Port: 80, Path: "/", Headers: map[string][]string{"x-big": {strings.Repeat("a", 900<<10)}}}
	errs := make(chan error, 16)
	for range 16 {
		go func() { _, err := l.Ask(context.Background(), big); errs <- err }()
	}
	for range 16 {
		select {
		case err := <-errs:
			if err != ErrTimeout {
				t.Fatalf("Ask to a stalled decider = %v, want ErrTimeout", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Ask to a stalled decider did not return")
		}
	}
}

// TestProtocolErrorsQuoteTheDecider: srt proxy prints a protocol error of
// its decider on stderr when it exits; a string the decider sent (an
// action, a field or header name, a host entry, a frame type) that holds
// a control, a line break or an override is quoted there, never raw.
func TestProtocolErrorsQuoteTheDecider(t *testing.T) {
	const odd = `\u001b[2K\rsrt: all clear\n\u202e`
	for _, tc := range []struct {
		name, in string
		parse    func([]byte) error
	}{
		{"action", `{"t":"verdict","id":1,"action":"` + odd + `"}`, verdict},
		{"unknown field", `{"t":"verdict","id":1,"action":"allow","` + odd + `":1}`, verdict},
		{"header name", `{"t":"verdict","id":1,"action":"allow","setHeaders":{"` + odd + `":"1"}}`, verdict},
		{"frame type", `{"t":"` + odd + `","id":1,"action":"allow"}`, verdict},
		{"allowed host", `{"t":"hello","proto":1,"allowedDomains":["` + odd + `"],"deniedDomains":[]}`, hello},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("%s was accepted", tc.in)
			}
			for _, r := range err.Error() {
				if !strconv.IsPrint(r) {
					t.Fatalf("the error shows %U raw: %q", r, err.Error())
				}
			}
		})
	}
}

func verdict(b []byte) error { _, err := ParseVerdict(b); return err }
func hello(b []byte) error   { _, err := ParseHello(b); return err }
