package proxy

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"srt.dev/internal/testenv"
)

// shownSafely reports whether text is printable UTF-8 without a control
// character, a line break or a format character (such as a bidirectional
// override): what may reach a terminal from a refusal.
func shownSafely(text string) bool {
	if !utf8.ValidString(text) {
		return false
	}
	for _, r := range text {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// TestOddHostsRefusedAndQuoted: a host name that is not a plain word (a
// SOCKS5 name carries any byte; net/http lets through a CONNECT or
// absolute-form host with bytes above 0x7f, raw or %-encoded) is refused
// and never resolved; its violation line, its explanation and the debug
// log show it Go-quoted, with no control, line break or override of its
// own.
func TestOddHostsRefusedAndQuoted(t *testing.T) {
	allBytes := make([]byte, 255)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	greet := []byte{0x05, 0x01, 0x02}
	refusedSOCKS := []byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name string
		host string // as the proxy reads it
		port int
		send func(tb *testbed) string // what the client got
		want string                   // its prefix
	}{
		{"SOCKS5 name forging a line", "\x1b[2K\rsrt: all clear\n", 443, func(tb *testbed) string {
			return string(socksExchange(t, tb.socks(t), greet, userPass("srt", "tok"), connectName("\x1b[2K\rsrt: all clear\n", 443)))
		}, string(refusedSOCKS)},
		{"SOCKS5 name of every byte", string(allBytes), 443, func(tb *testbed) string {
			return string(socksExchange(t, tb.socks(t), greet, userPass("srt", "tok"), connectName(string(allBytes), 443)))
		}, string(refusedSOCKS)},
		{"CONNECT with a right-to-left override", "moc.\u202elive", 443, func(tb *testbed) string {
			return rawRequest(t, tb, "CONNECT moc.\u202elive:443 HTTP/1.1")
		}, "HTTP/1.1 403 "},
		{"CONNECT with a %-encoded C1 control", "a\u009b2Kb", 443, func(tb *testbed) string {
			return rawRequest(t, tb, "CONNECT a%c2%9b2Kb:443 HTTP/1.1")
		}, "HTTP/1.1 403 "},
		{"absolute form with a byte that is not UTF-8", "a\xffb", 80, func(tb *testbed) string {
			return rawRequest(t, tb, "GET http://a%ffb/ HTTP/1.1")
		}, "HTTP/1.1 403 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test"}, []string{"evil.test"}, nil)
			var log testenv.SyncBuffer
			tb.egress.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			if got := tt.send(tb); !strings.HasPrefix(got, tt.want) {
				t.Errorf("the client got %q, want a refusal %q", got, tt.want)
			}
			tb.mu.Lock()
			defer tb.mu.Unlock()
			if len(tb.resolved) != 0 {
				t.Errorf("resolved %q", tb.resolved)
			}
			if len(tb.events) != 1 || tb.events[0].Allow || tb.events[0].Host != tt.host {
				t.Fatalf("events %+v, want one refusal of %q", tb.events, tt.host)
			}
			ev := tb.events[0]
			shown := strconv.Quote(tt.host)
			if want := fmt.Sprintf("deny network-outbound %s:%d (malformed host)", shown, tt.port); ev.Line() != want {
				t.Errorf("Line() = %q\nwant %q", ev.Line(), want)
			}
			if want := fmt.Sprintf("srt sandbox refused %s:%d: the host name is malformed", shown, tt.port); !strings.HasPrefix(ev.Why, want) || !shownSafely(ev.Why) {
				t.Errorf("Why = %q\nwant it to start with %q", ev.Why, want)
			}
			for _, line := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
				if !shownSafely(line) || !strings.HasPrefix(line, "time=") {
					t.Errorf("debug line %q", line)
				}
			}
		})
	}
}

// rawRequest sends a request line with the proxy token and returns what
// the proxy answered.
func rawRequest(t *testing.T, tb *testbed, line string) string {
	c, err := net.Dial("tcp", tb.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s\r\nHost: x\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\nConnection: close\r\n\r\n", line)
	return readAll(t, c)
}
