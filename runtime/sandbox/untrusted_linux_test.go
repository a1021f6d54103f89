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

// The targets srt shows for testenv.OddHostsScript's refusals.
var (
	oddSOCKSShown   = strconv.Quote(testenv.OddHosts[0]) + ":443"
	oddCONNECTShown = strconv.Quote(testenv.OddHosts[1]) + ":443"
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
// reaches it, and the command sees both refused.
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
	out, res := sh(t, m, Options{}, testenv.OddHostsScript)
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
