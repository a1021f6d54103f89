//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"srt.dev/internal/testenv"
)

// TestOddHostsForgeNoLines: a command that sends host names through
// srt's proxies that would erase the terminal's line and print a line of
// srt's own (SOCKS5), or turn srt's line around (a right-to-left override,
// CONNECT), gets them refused; what srt prints after the command (the
// refusal lines, the violations block, the debug log) and the audit log
// show them Go-quoted, with no control, line break or override of the
// command's, and no line srt did not write. As the caller, and as nobody
// when the tests run as root.
func TestOddHostsForgeNoLines(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3")
	bin := testenv.PublicCopy(t, "srt")
	users := []int{os.Geteuid()}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	var shown []string
	for _, h := range testenv.OddHosts {
		shown = append(shown, strconv.Quote(h)+":443")
	}
	for _, uid := range users {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newWorld(t, bin, uid)
			w.write("s.json", writeProject)
			audit := filepath.Join(w.home, "audit.jsonl")
			code, stdout, stderr := w.srt("--settings", "s.json", "--refusals", "always", "--violations", "--debug", "--audit-log", audit, "-c", testenv.OddHostsScript)
			if code != 0 || stdout != "socks 02\nconnect 403\n" {
				t.Fatalf("exit %d, stdout %q, want both names refused\n%s", code, stdout, stderr)
			}
			checkNoForgedLines(t, "stderr", stderr)
			for _, want := range []string{
				"srt sandbox refused " + shown[0] + ": the host name is malformed, and no setting allows it.",
				"srt sandbox refused " + shown[1] + ": the host name is malformed, and no setting allows it.",
				"<sandbox_violations>\ndeny network-outbound " + shown[0] + " (malformed host)\ndeny network-outbound " + shown[1] + " (malformed host)\n</sandbox_violations>",
			} {
				if !strings.Contains(stderr, "\n"+want+"\n") {
					t.Errorf("stderr lacks the lines\n%s\n--- stderr:\n%s", want, stderr)
				}
			}
			b, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			checkNoForgedLines(t, "the audit log", string(b))
			for _, h := range testenv.OddHosts {
				if want := `"host":` + strconv.Quote(strconv.Quote(h)); !strings.Contains(string(b), want) {
					t.Errorf("the audit log lacks %s:\n%s", want, b)
				}
			}
		})
	}
}

// checkNoForgedLines fails when text holds a byte that is not UTF-8, a
// character that is not printable (a control, ESC, CR, a bidirectional
// override) other than the line feeds between lines, or a line the
// command forged, as a terminal would show it (a carriage return starts
// the line again).
func checkNoForgedLines(t *testing.T, what, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s is not UTF-8: %q", what, text)
	}
	for _, r := range text {
		if r != '\n' && !strconv.IsPrint(r) {
			t.Errorf("%s holds %U: %q", what, r, text)
			break
		}
	}
	for _, l := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(l, "srt: all clear") {
			t.Errorf("%s holds a line the command wrote: %q", what, l)
		}
	}
}
