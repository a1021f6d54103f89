//go:build linux

package sandbox

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/violations"
)

// oddNamesScript is a command that sends the proxies host names that are
// not plain words: through SOCKS5 (whose name carries any byte) one that
// would erase the terminal's line and write a line of srt's, and through
// CONNECT one with a right-to-left override (net/http lets bytes above
// 0x7f through). It prints the SOCKS5 reply code and the CONNECT status.
const oddNamesScript = `python3 -c '
import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["FTP_PROXY"])
user, pw = urllib.parse.unquote(u.username).encode(), u.password.encode()
name = b"\x1b[2K\rsrt: all clear\n"
s = socket.create_connection(("127.0.0.1", u.port))
s.sendall(b"\x05\x01\x02" + bytes([1, len(user)]) + user + bytes([len(pw)]) + pw + b"\x05\x01\x00\x03" + bytes([len(name)]) + name + b"\x01\xbb")
got = b""
while len(got) < 6:
    more = s.recv(64)
    if not more:
        break
    got += more
print("socks", got[5:6].hex())
h = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode(urllib.parse.unquote(h.username).encode() + b":" + h.password.encode())
c = socket.create_connection(("127.0.0.1", h.port))
c.sendall(b"CONNECT moc.\xe2\x80\xaelive:443 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic " + auth + b"\r\n\r\n")
print("connect", c.recv(64).split(b" ")[1].decode())
'`

// The lines srt shows for oddNamesScript's refusals.
var (
	oddSOCKSShown   = strconv.Quote("\x1b[2K\rsrt: all clear\n") + ":443"
	oddCONNECTShown = strconv.Quote("moc.\u202elive") + ":443"
)

// printableText reports whether text is UTF-8 that holds no control (but
// the line feeds between lines), no format character such as a
// bidirectional override, and no line or paragraph separator.
func printableText(text string) bool {
	if !utf8.ValidString(text) {
		return false
	}
	for _, r := range text {
		if r != '\n' && !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// TestOddHostsShownQuoted: what the library reports of a command's
// refusals (Result.Violations, OnViolation, Violations().Annotate, the
// audit log) shows a host the command chose Go-quoted when it is not a
// plain word: no control, line break or override of the command's
// reaches it. The names are refused and never resolved.
func TestOddHostsShownQuoted(t *testing.T) {
	testenv.Require(t, "bwrap", "python3")
	var audit bytes.Buffer
	var mu sync.Mutex
	var seen []violations.Entry
	m, err := NewManager(compile(t, `"allowedDomains": [], "deniedDomains": []`), ManagerOptions{
		Audit:       &audit,
		OnViolation: func(e violations.Entry) { mu.Lock(); seen = append(seen, e); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	out, res := sh(t, m, Options{}, oddNamesScript)
	if out != "socks 02\nconnect 403\n" {
		t.Errorf("the command saw %q, want both refused", out)
	}
	wantLines := []string{
		"deny network-outbound " + oddSOCKSShown + " (malformed host)",
		"deny network-outbound " + oddCONNECTShown + " (malformed host)",
	}
	wantWhys := []string{
		"srt sandbox refused " + oddSOCKSShown + ": the host name is malformed, and no setting allows it.",
		"srt sandbox refused " + oddCONNECTShown + ": the host name is malformed, and no setting allows it.",
	}
	mu.Lock()
	defer mu.Unlock()
	for name, es := range map[string][]violations.Entry{"Result.Violations": res.Violations, "OnViolation": seen} {
		if len(es) != 2 {
			t.Fatalf("%s: %+v", name, es)
		}
		for i, e := range es {
			if e.Line != wantLines[i] || e.Why != wantWhys[i] {
				t.Errorf("%s[%d]: line %q, why %q\nwant %q, %q", name, i, e.Line, e.Why, wantLines[i], wantWhys[i])
			}
		}
	}
	annotated := m.Violations().Annotate(res.Violations[0].Key, "stderr")
	if want := "stderr\n<sandbox_violations>\n" + strings.Join(wantLines, "\n") + "\n</sandbox_violations>"; annotated != want {
		t.Errorf("Annotate = %q\nwant %q", annotated, want)
	}
	if !printableText(audit.String()) || !strings.Contains(audit.String(), `"host":"\"\\x1b[2K\\rsrt: all clear\\n\""`) ||
		!strings.Contains(audit.String(), `"host":"\"moc.\\u202elive\""`) {
		t.Errorf("audit log:\n%s", audit.String())
	}
}
