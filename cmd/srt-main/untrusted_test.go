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
	bin := srtBin
	users := testUsers()
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

// TestOddNamesInTheQuarantine: a git configuration the command wrote in a
// directory whose name would forge a line, setting a variable whose name
// holds a right-to-left override and a tab (git's plain form allows both),
// is quarantined; srt's lines about it after the command, the violations
// block and srt quarantine list show the path and the variable Go-quoted.
// As the caller, and as nobody when the tests run as root.
func TestOddNamesInTheQuarantine(t *testing.T) {
	requireSandbox(t)
	bin := srtBin
	users := testUsers()
	const script = `d="odd$(printf '\033[2K\r')srt: all clear" && mkdir -p "$d/.git" && printf '[remote "a\342\200\256b\tc"]\n\tproxy = x\n' > "$d/.git/config"`
	why := `(a git configuration that sets "remote.a\u202eb\tc.proxy"`
	path := `/odd\x1b[2K\rsrt: all clear/.git/config"`
	for _, uid := range users {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newWorld(t, bin, uid)
			w.write("s.json", writeProject)
			code, _, stderr := w.srt("--settings", "s.json", "--violations", "-c", script)
			if code != 0 || !strings.Contains(stderr, path+" "+why+"):") || !strings.Contains(stderr, path+" "+why+"; quarantined as ") {
				t.Fatalf("exit %d, stderr lacks the quarantine's lines for %s %s:\n%s", code, path, why, stderr)
			}
			checkNoForgedLines(t, "stderr", stderr)
			code, list, errOut := w.srt("quarantine", "list")
			if code != 0 || !strings.Contains(list, path+"\n    "+why[1:]+"\n") {
				t.Fatalf("srt quarantine list: exit %d, %s\n%s", code, list, errOut)
			}
			checkNoForgedLines(t, "srt quarantine list", list)
		})
	}
}

// TestOddLinkTargetShownQuoted: a link a command planted on the way to a
// later run's write root stops that run; the error names the link and
// what it points to, which the command chose, Go-quoted. As the caller,
// and as nobody when the tests run as root.
func TestOddLinkTargetShownQuoted(t *testing.T) {
	requireSandbox(t)
	bin := srtBin
	users := testUsers()
	for _, uid := range users {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			w := newWorld(t, bin, uid)
			linkedRootAttack.setup(w)
			if code, _, stderr := w.srt("--settings", "s.json", "-c", `rm -rf node_modules && ln -s "$(printf '\033[2K\rsrt: all clear\nx')" node_modules`); code != 0 {
				t.Fatalf("planting the link: exit %d\n%s", code, stderr)
			}
			code, _, stderr := w.srt("--settings", "cache.json", "-c", "true")
			want := filepath.Join(w.proj, "node_modules") + ` -> "\x1b[2K\rsrt: all clear\nx"`
			if code == 0 || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stderr lacks %s:\n%s", code, want, stderr)
			}
			checkNoForgedLines(t, "stderr", stderr)
		})
	}
}
