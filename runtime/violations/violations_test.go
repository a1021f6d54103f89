package violations

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRingKeepsTheLast100(t *testing.T) {
	var s Store
	for i := 0; i < 250; i++ {
		s.Add(fmt.Sprintf("deny network-outbound h%d.test:443 (x)", i), "", time.Unix(int64(i), 0))
	}
	got := s.Entries()
	if len(got) != Keep || s.Total() != 250 {
		t.Fatalf("held %d, total %d", len(got), s.Total())
	}
	for i, e := range got {
		if want := fmt.Sprintf("deny network-outbound h%d.test:443 (x)", 150+i); e.Line != want {
			t.Fatalf("entry %d = %q, want %q", i, e.Line, want)
		}
	}
}

func TestIgnoreViolations(t *testing.T) {
	var s Store
	s.SetIgnore(map[string][]string{"*": {"telemetry.test"}, "git push": {"github.com"}})
	push, build := Key("git push origin main"), Key("make build")
	s.Register(push, "git push origin main")
	s.Register(build, "make build")
	cases := []struct {
		line, key string
		kept      bool
	}{
		{"deny network-outbound telemetry.test:443 (x)", build, false}, // "*" pattern
		{"deny network-outbound github.com:443 (x)", push, false},      // command and pattern
		{"deny network-outbound github.com:443 (x)", build, true},      // other command
		{"deny network-outbound github.com:443 (x)", "", true},         // no command
		{"deny network-outbound gitlab.com:443 (x)", push, true},       // other line
	}
	for _, c := range cases {
		if _, got := s.Add(c.line, c.key, time.Now()); got != c.kept {
			t.Errorf("%q for %q: kept=%v, want %v", c.line, c.key, got, c.kept)
		}
	}
	if s.Total() != 3 {
		t.Errorf("total %d, want 3", s.Total())
	}
}

func TestKeyAndAttribution(t *testing.T) {
	long := strings.Repeat("a", 99) + "😀" + "tail" // the emoji would be units 100-101
	if got, want := First100(long), strings.Repeat("a", 99); got != want {
		t.Errorf("First100 split a surrogate pair: %q", got)
	}
	if Key("abc") != base64.StdEncoding.EncodeToString([]byte("abc")) {
		t.Error("Key is not standard base64 of the text")
	}
	// Commands sharing their first 100 units share a key (the reference's
	// rule; ids of at least 22 random characters avoid it).
	a, b := strings.Repeat("x", 100)+"one", strings.Repeat("x", 100)+"two"
	if Key(a) != Key(b) {
		t.Error("keys of a shared 100-unit prefix differ")
	}
	var s Store
	k1, k2 := Key("cmd one"), Key("cmd two")
	s.Register(k1, "cmd one")
	s.Add("deny network-outbound a.test:1 (r)", k1, time.Now())
	s.Add("deny network-outbound b.test:2 (r)", k2, time.Now())
	s.Add("deny network-outbound c.test:3 (r)", Key("unregistered\x07<cmd>"), time.Now())
	if got := s.For(k1); len(got) != 1 || got[0].Command != "cmd one" {
		t.Errorf("For(k1) = %+v", got)
	}
	if got := s.For(Key("unregistered\x07<cmd>")); len(got) != 1 || got[0].Command != "unregistered cmd" {
		t.Errorf("an unregistered key is shown sanitised: %+v", got)
	}
	if got := s.Annotate(k1, "boom"); got != "boom\n<sandbox_violations>\ndeny network-outbound a.test:1 (r)\n</sandbox_violations>" {
		t.Errorf("Annotate = %q", got)
	}
	if got := s.Annotate(Key("quiet"), "boom"); got != "boom" {
		t.Errorf("Annotate without violations changed stderr: %q", got)
	}
}

func TestLinesAreSanitised(t *testing.T) {
	var s Store
	s.Add("deny network-outbound x.test:1 (a\u202e<b>\n\tc\u200b)", "", time.Now())
	if got := s.Entries()[0].Line; got != "deny network-outbound x.test:1 (a b c )" {
		t.Errorf("line = %q", got)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAuditLog(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditLog(&buf)
	a.Write(Record{Proxy: "connect", Host: "a.test", Port: 443, Allow: true, Rule: "a.test", Stage: "policy"})
	a.Write(Record{Proxy: "socks", Host: "b.test", Port: 22, Reason: "host <is> on the deny list", Stage: "policy"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || a.Err() != nil {
		t.Fatalf("%d lines, %v", len(lines), a.Err())
	}
	var r Record
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Allow || r.Reason != "host <is> on the deny list" {
		t.Errorf("%v %+v (raw %s)", err, r, lines[1])
	}
	f := NewAuditLog(failingWriter{})
	f.Write(Record{})
	if f.Err() == nil {
		t.Error("a failed write is not reported")
	}
}

// TestAuditLogLines pins the lines of both kinds of record, each one
// Write: a decision as srt shows it (no HTML escapes), a run record as
// json.Marshal writes it; after a failed write, nothing more is written.
func TestAuditLogLines(t *testing.T) {
	var writes []string
	fail := false
	a := NewAuditLog(writerFunc(func(b []byte) (int, error) {
		if fail {
			return 0, errors.New("disk full")
		}
		writes = append(writes, string(b))
		return len(b), nil
	}))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	status := 3
	a.WriteRun(RunRecord{Time: at, Event: "start", PID: 7, User: "me", UID: 1000, Cwd: "/p&q", Settings: "s.json", SettingsSHA256: "ab", Program: "sh", Args: 2})
	a.Write(Record{Time: at, Proxy: "http", Host: "a.test", Port: 80, Reason: "x <y>", Rule: "a.test", Stage: "policy", Program: "sh", CommandHash: "cd"})
	a.WriteRun(RunRecord{Time: at, Event: "exit", PID: 7, User: "me", UID: 1000, Cwd: "/p&q", Settings: "s.json", SettingsSHA256: "ab", Program: "sh", Args: 2, ExitStatus: &status})
	want := []string{
		`{"time":"2026-01-02T03:04:05Z","event":"start","pid":7,"user":"me","uid":1000,"cwd":"/p\u0026q","settings":"s.json","settingsSha256":"ab","program":"sh","args":2}` + "\n",
		`{"time":"2026-01-02T03:04:05Z","proxy":"http","host":"a.test","port":80,"allow":false,"reason":"x <y>","rule":"a.test","stage":"policy","program":"sh","commandHash":"cd"}` + "\n",
		`{"time":"2026-01-02T03:04:05Z","event":"exit","pid":7,"user":"me","uid":1000,"cwd":"/p\u0026q","settings":"s.json","settingsSha256":"ab","program":"sh","args":2,"exitStatus":3}` + "\n",
	}
	if strings.Join(writes, "|") != strings.Join(want, "|") {
		t.Errorf("writes:\n%q\nwant:\n%q", writes, want)
	}
	fail = true
	a.WriteRun(RunRecord{Event: "start"})
	fail = false
	a.Write(Record{Proxy: "http"})
	if len(writes) != 3 || a.Err() == nil {
		t.Errorf("after a failed write: %d writes, Err %v; want 3 and the error", len(writes), a.Err())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestAuditLogQuotesWhatTheCommandChose: a host or a path that is not a
// plain word is written Go-quoted, so that the file, shown as it is,
// carries no control, override or byte that is not UTF-8 of the
// command's, and the exact bytes can be read back; a host name and a path
// are written as they are.
func TestAuditLogQuotesWhatTheCommandChose(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditLog(&buf)
	odd := "\x1b[2K\rsrt: all clear\n\u009b\u202e\x7f\xff"
	a.Write(Record{Proxy: "socks", Host: odd, Port: 443, Stage: "policy"})
	a.Write(Record{Layer: "landlock", Path: "/dev/" + odd, Stage: "landlock"})
	a.Write(Record{Proxy: "connect", Host: "pypi.org", Port: 443, Stage: "policy"})
	a.Write(Record{Layer: "landlock", Path: "/dev/x", Stage: "landlock"})
	text := buf.String()
	for _, r := range strings.TrimSuffix(text, "\n") {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == 0x202e || r == utf8.RuneError {
			t.Errorf("the audit log carries %U:\n%s", r, text)
		}
	}
	var got []Record
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 4 || got[2].Host != "pypi.org" || got[3].Path != "/dev/x" {
		t.Fatalf("records %+v", got)
	}
	if h, err := strconv.Unquote(got[0].Host); err != nil || h != odd {
		t.Errorf("host %q reads back as %q (%v)", got[0].Host, h, err)
	}
	if p, err := strconv.Unquote(got[1].Path); err != nil || p != "/dev/"+odd {
		t.Errorf("path %q reads back as %q (%v)", got[1].Path, p, err)
	}
}

func TestSeatbeltLog(t *testing.T) {
	key := Key("cat ~/.ssh/id_rsa")
	chunk := "2026-12-02 10:00:00.000 E  kernel[0:1] (Sandbox) Sandbox: cat(4242) deny(1) file-read-data /Users/me/.ssh/id_rsa\n" +
		"CMD64_" + key + "_END__k3x9_SBX\n" +
		"2026-12-02 10:00:00.001 E  kernel[0:1] Sandbox: cat(4242) deny(1) mach-lookup com.apple.diagnosticd\n" +
		"2026-12-02 10:00:00.002 E  kernel[0:1] Sandbox: mDNSResponder(88) deny(1) network-outbound /private/var/run/mDNSResponder\n" +
		"2026-12-02 10:00:00.003 I  kernel[0:1] Sandbox: cat(4242) allow file-read-data /etc/hosts\n"
	got := SeatbeltLog(chunk)
	if len(got) != 1 || got[0].Key != key || !strings.HasSuffix(got[0].Line, "deny(1) file-read-data /Users/me/.ssh/id_rsa") {
		t.Fatalf("%+v", got)
	}
	// The store attributes it and applies ignoreViolations to it.
	var s Store
	s.Register(key, "cat ~/.ssh/id_rsa")
	s.SetIgnore(map[string][]string{"cat": {"/Users/me/.ssh"}})
	if _, kept := s.Add(got[0].Line, got[0].Key, time.Now()); kept {
		t.Error("ignoreViolations did not apply to a Seatbelt line")
	}
	if got := SeatbeltLog("Sandbox: x(1) deny(1) file-write-data /a"); len(got) != 1 || got[0].Key != "" {
		t.Errorf("untagged chunk: %+v", got)
	}
}

// The key is what lies between the tag's prefix and the first "_END"
// after at least one byte, as `^CMD64_(.+?)_END` reads it.
func TestSeatbeltTagKey(t *testing.T) {
	for _, c := range []struct {
		line, key string
		ok        bool
	}{
		{"CMD64_abc_END__x_SBX", "abc", true},
		{"CMD64_a_END_b_END", "a", true},
		{"CMD64__END_END", "_END", true}, // the key needs one byte: the first "_END" is skipped
		{"CMD64__ENDx", "", false},
		{"CMD64_", "", false},
		{"CMD64_abc", "", false},
		{"CMD64__END", "", false},
		{" CMD64_abc_END", "", false}, // SeatbeltLog trims; tagKey does not
		{"XCMD64_abc_END", "", false},
	} {
		key, ok := tagKey(c.line)
		if key != c.key || ok != c.ok {
			t.Errorf("tagKey(%q) = %q, %v; want %q, %v", c.line, key, ok, c.key, c.ok)
		}
	}
}
