package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	xproxy "golang.org/x/net/proxy"

	"srt.dev/internal/testenv"
)

func (tb *testbed) socks(t *testing.T) string {
	t.Helper()
	// Reuse the testbed's policy through a second listener.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go (&SOCKS{Egress: tb.egress}).Serve(context.Background(), l)
	return l.Addr().String()
}

func TestSOCKSAllowed(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test"}, []string{"evil.test"}, nil)
	addr := tb.socks(t)
	dialer, err := xproxy.SOCKS5("tcp", addr, &xproxy.Auth{User: "srt.cmd", Password: "tok"}, xproxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fmt.Sprintf("127.0.0.1:%d", tb.port), fmt.Sprintf("vm.test:%d", tb.port)} {
		c, err := dialer.(xproxy.ContextDialer).DialContext(context.Background(), "tcp", target)
		if err != nil {
			t.Fatalf("SOCKS CONNECT %s: %v", target, err)
		}
		fmt.Fprintf(c, "GET /s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		if string(b) != "hello h /s" {
			t.Errorf("%s: %q", target, b)
		}
	}
}

// socksExchange sends raw bytes and returns everything the server writes.
func socksExchange(t *testing.T, addr string, msgs ...[]byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range msgs {
		c.Write(m)
	}
	b, _ := io.ReadAll(c)
	return b
}

func userPass(user, pass string) []byte {
	return append(append(append([]byte{0x01, byte(len(user))}, user...), byte(len(pass))), pass...)
}

func connectName(host string, port int) []byte {
	b := append([]byte{0x05, 0x01, 0x00, 0x03, byte(len(host))}, host...)
	return binary.BigEndian.AppendUint16(b, uint16(port))
}

func TestSOCKSFixtures(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test", "nodns.test"}, []string{"evil.test"}, map[string]string{"evil.test": "known exfiltration host"})
	addr := tb.socks(t)
	greet := []byte{0x05, 0x01, 0x02} // version 5, one method: user/password
	tests := []struct {
		name string
		msgs [][]byte
		want []byte
	}{
		{"denied name: 02, and never resolved", [][]byte{greet, userPass("srt", "tok"), connectName("evil.test", 443)},
			[]byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}},
		{"unlisted name", [][]byte{greet, userPass("srt", "tok"), connectName("other.test", 443)},
			[]byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}},
		{"guard refusal: 02", [][]byte{greet, userPass("srt", "tok"), connectName("vm.test", 22)},
			[]byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}},
		{"DNS failure: 04", [][]byte{greet, userPass("srt", "tok"), connectName("nodns.test", 443)},
			[]byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x04, 0x00, 0x01, 0, 0, 0, 0, 0, 0}},
		{"wrong token", [][]byte{greet, userPass("srt", "nope")}, []byte{0x05, 0x02, 0x01, 0x01}},
		{"user not srt", [][]byte{greet, userPass("bob", "tok")}, []byte{0x05, 0x02, 0x01, 0x01}},
		{"BIND", [][]byte{greet, userPass("srt", "tok"), {0x05, 0x02, 0x00, 0x01, 1, 2, 3, 4, 0, 80}}, []byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x07}},
		{"UDP ASSOCIATE", [][]byte{greet, userPass("srt", "tok"), {0x05, 0x03, 0x00, 0x01, 1, 2, 3, 4, 0, 80}}, []byte{0x05, 0x02, 0x01, 0x00, 0x05, 0x07}},
		{"SOCKS4: dropped", [][]byte{{0x04, 0x01, 0x00, 0x50, 1, 2, 3, 4, 0}}, nil},
		{"unauthenticated, port 443: 02", [][]byte{{0x05, 0x01, 0x00}, connectName("github.com", 443)},
			[]byte{0x05, 0x00, 0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		got := socksExchange(t, addr, tt.msgs...)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s:\n got % x\nwant % x", tt.name, got, tt.want)
		}
	}
	// No DNS leak: a denied or unlisted name is never looked up.
	tb.mu.Lock()
	for _, name := range tb.resolved {
		if name == "evil.test" || name == "other.test" || name == "github.com" {
			t.Errorf("%s was resolved", name)
		}
	}
	if len(tb.resolved) == 0 {
		t.Error("nothing was resolved: the test does not reach the resolver")
	}
	tb.mu.Unlock()
	// Unauthenticated on port 22: an SSH disconnect that ssh will print.
	got := socksExchange(t, addr, []byte{0x05, 0x01, 0x00}, connectName("evil.test", 22))
	wantHead := []byte{0x05, 0x00, 0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0}
	if !bytes.HasPrefix(got, wantHead) || !bytes.Contains(got, []byte("SSH-2.0-policy_refusal\r\n")) || !bytes.Contains(got, []byte("known exfiltration host")) {
		t.Errorf("port 22 refusal: %q", got)
	}
	pkt := got[len(wantHead)+len("SSH-2.0-policy_refusal\r\n"):]
	if n := binary.BigEndian.Uint32(pkt); int(n)+4 != len(pkt) || len(pkt)%8 != 0 || pkt[4] < 4 || pkt[5] != 1 {
		t.Errorf("malformed SSH_MSG_DISCONNECT: % x", pkt)
	}
}

// TestSOCKSRefusalExplainedInDebugLog checks that a SOCKS refusal, whose
// reply cannot carry text, is explained in the debug log: the sandbox, the
// rule and the settings file.
func TestSOCKSRefusalExplainedInDebugLog(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test"}, []string{"evil.test"}, nil)
	var log testenv.SyncBuffer
	tb.egress.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr := tb.socks(t)
	greet := []byte{0x05, 0x01, 0x02}
	socksExchange(t, addr, greet, userPass("srt", "tok"), connectName("other.test", 443))
	socksExchange(t, addr, greet, userPass("srt", "tok"), connectName("evil.test", 443))
	for _, want := range []string{
		`srt sandbox refused other.test:443: it is not in network.allowedDomains. To allow it, add \"other.test\" to network.allowedDomains in /p/.srt-settings.json.`,
		`srt sandbox refused evil.test:443: it matches \"evil.test\" in network.deniedDomains`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("debug log lacks %q:\n%s", want, log.String())
		}
	}
}

// socksConnect opens a SOCKS5 tunnel to target (an IPv4 literal and a
// port) with the token.
func socksConnect(addr, target string) (net.Conn, error) {
	host, portText, _ := net.SplitHostPort(target)
	port, _ := strconv.Atoi(portText)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host).To4()
	msg := []byte{0x05, 0x01, 0x02, 0x01, 3, 's', 'r', 't', 3, 't', 'o', 'k', 0x05, 0x01, 0x00, 0x01}
	msg = append(append(msg, ip...), byte(port>>8), byte(port))
	if _, err := c.Write(msg); err != nil {
		c.Close()
		return nil, err
	}
	reply := make([]byte, 2+2+10)
	if _, err := io.ReadFull(c, reply); err != nil || reply[5] != 0 {
		c.Close()
		return nil, fmt.Errorf("SOCKS: % x %v", reply, err)
	}
	return c, nil
}
