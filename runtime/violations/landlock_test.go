package violations

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Records as a 6.18 kernel delivered them to the audit multicast group
// for a sandboxed "echo > /dev/foo" and "mkdir ~/.ssh/d" under a
// read-deny tmpfs, and an "echo 1 > /proc/self/oom_score_adj".
const (
	recAccessDev  = `audit(1796294009.917:9): domain=1fbb9ab47 blockers=fs.make_reg path="/dev" dev="tmpfs" ino=1`
	recAllocated  = `audit(1796294009.917:9): domain=1fbb9ab47 status=allocated mode=enforcing pid=28357 uid=0 exe="/tmp/srtbin/srt" comm="5"`
	recAccessDir  = `audit(1796294009.941:11): domain=1fbb9ab47 blockers=fs.make_dir path="/tmp/h/.ssh" dev="tmpfs" ino=1`
	recAccessProc = `audit(1796294009.957:12): domain=1fbb9ab47 blockers=fs.write_file path="/proc/9/oom_score_adj" dev="proc" ino=3521900`
	recFreed      = `audit(1796294010.021:13): domain=1fbb9ab47 status=deallocated denials=5`
	recSignal     = `audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm="systemd"`
	recSyscall    = `audit(1796294009.917:9): arch=c000003e syscall=257 success=no exit=-13 a0=ffffff9c items=0 ppid=28350 pid=28360 comm="sh" exe="/usr/bin/dash" key=(null)`
)

func TestParseAuditRecord(t *testing.T) {
	r, ok := ParseAuditRecord(AuditLandlockAccess, recAccessDev+"\x00")
	if !ok {
		t.Fatal("ParseAuditRecord refused a kernel record")
	}
	want := AuditRecord{Type: AuditLandlockAccess, Time: time.Unix(1796294009, 917e6), Serial: 9,
		Fields: map[string]string{"domain": "1fbb9ab47", "blockers": "fs.make_reg", "path": "/dev", "dev": "tmpfs", "ino": "1"}}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("ParseAuditRecord (-want +got):\n%s", d)
	}
	for _, bad := range []string{"", "audit(", "type=1423 msg=audit(1.000:2): x=y", "audit(1.5:2): x=y", "audit(a.000:2): x=y", "audit(1.000): x=y"} {
		if _, ok := ParseAuditRecord(1423, bad); ok {
			t.Errorf("ParseAuditRecord(%q) accepted it", bad)
		}
	}
	// An event's last record may carry no field.
	if r, ok := ParseAuditRecord(1320, "audit(1796293634.029:2): "); !ok || r.Serial != 2 || len(r.Fields) != 0 {
		t.Errorf("ParseAuditRecord(EOE) = %+v, %v", r, ok)
	}
}

// The kernel writes a string with a space, a quote, a control character
// or a byte past '~' in hexadecimal, unquoted (audit_log_n_hex).
func TestParseAuditRecordHex(t *testing.T) {
	// "/tmp/a b\"\n<é>"
	text := `audit(1796294009.941:11): domain=1fbb9ab47 blockers=fs.make_reg path=2F746D702F6120622229A0A3CC3A93E dev="tmpfs" ino=1`
	if _, ok := ParseAuditRecord(1423, text); !ok {
		t.Fatal("refused")
	}
	r, _ := ParseAuditRecord(1423, text)
	if _, ok := r.Fields["path"]; ok {
		t.Errorf("an odd number of hex digits decoded to %q", r.Fields["path"])
	}
	text = `audit(1796294009.941:11): domain=1fbb9ab47 blockers=fs.make_reg path=2F746D702F61206222220A3CC3A93E dev="tmpfs" ino=1`
	r, _ = ParseAuditRecord(1423, text)
	if got, want := r.Fields["path"], "/tmp/a b\"\"\n<é>"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	// What the kernel writes when d_path fails is not a path.
	r, _ = ParseAuditRecord(1423, `audit(1.000:1): domain=1 blockers=fs.write_file path=<too_long> dev="vda" ino=2`)
	if _, ok := LandlockAccess(r); ok {
		t.Error("LandlockAccess accepted a record without a path")
	}
}

func TestLandlockRecords(t *testing.T) {
	parse := func(typ int, s string) AuditRecord {
		r, ok := ParseAuditRecord(typ, s)
		if !ok {
			t.Fatalf("ParseAuditRecord(%q) refused it", s)
		}
		return r
	}
	d, ok := LandlockAccess(parse(AuditLandlockAccess, recAccessProc))
	want := LandlockDenial{Domain: "1fbb9ab47", Blockers: []string{"fs.write_file"}, Path: "/proc/9/oom_score_adj", Time: time.Unix(1796294009, 957e6), Serial: 12}
	if d := cmp.Diff(want, d); !ok || d != "" {
		t.Errorf("LandlockAccess (-want +got):\n%s", d)
	}
	for _, s := range []string{recSignal} {
		if _, ok := LandlockAccess(parse(AuditLandlockAccess, s)); ok {
			t.Errorf("LandlockAccess(%q) accepted a record of no file", s)
		}
	}
	if _, ok := LandlockAccess(parse(1300, recSyscall)); ok {
		t.Error("LandlockAccess accepted a SYSCALL record")
	}
	dom, ok := LandlockDomainRecord(parse(AuditLandlockDomain, recAllocated))
	if want := (LandlockDomain{ID: "1fbb9ab47", Allocated: true, PID: 28357, Comm: "5", Serial: 9}); !ok || dom != want {
		t.Errorf("LandlockDomainRecord(allocated) = %+v, %v; want %+v", dom, ok, want)
	}
	dom, ok = LandlockDomainRecord(parse(AuditLandlockDomain, recFreed))
	if want := (LandlockDomain{ID: "1fbb9ab47", Denials: 5, Serial: 13}); !ok || dom != want {
		t.Errorf("LandlockDomainRecord(deallocated) = %+v, %v; want %+v", dom, ok, want)
	}
	if _, ok := LandlockDomainRecord(parse(AuditLandlockAccess, recAccessDev)); ok {
		t.Error("LandlockDomainRecord accepted an access record")
	}
}

func TestLandlockLine(t *testing.T) {
	for _, c := range []struct {
		blockers          []string
		path, line, doing string
	}{
		{[]string{"fs.make_reg"}, "/dev", "deny file-write-create /dev (fs.make_reg: outside the write roots)", "creating a file in /dev"},
		{[]string{"fs.write_file"}, "/proc/9/oom_score_adj", "deny file-write-data /proc/9/oom_score_adj (fs.write_file: outside the write roots)", "writing /proc/9/oom_score_adj"},
		{[]string{"fs.make_reg", "fs.refer"}, "/usr/local", "deny file-write-create /usr/local (fs.make_reg,fs.refer: outside the write roots)", "creating a file in /usr/local"},
		{[]string{"fs.refer"}, "/usr/bin", "deny file-write-rename /usr/bin (fs.refer: outside the write roots)", "moving or linking a file into or out of /usr/bin"},
		{[]string{"fs.remove_file"}, "/a", "deny file-write-unlink /a (fs.remove_file: outside the write roots)", "removing a file from /a"},
		{[]string{"fs.ioctl_dev"}, "/dev/sda", "deny file-ioctl /dev/sda (fs.ioctl_dev: outside the write roots)", "an ioctl on the device /dev/sda"},
		{[]string{"fs.future"}, "/x%s", "deny file-write /x%s (fs.future: outside the write roots)", "writing /x%s"},
		// The command chose the path: one that is not a plain word is
		// shown Go-quoted.
		{[]string{"fs.make_reg"}, "/dev/\x1b[2K\rsrt: all clear\n", `deny file-write-create "/dev/\x1b[2K\rsrt: all clear\n" (fs.make_reg: outside the write roots)`, `creating a file in "/dev/\x1b[2K\rsrt: all clear\n"`},
		{[]string{"fs.write_file"}, "/usr/\u202ecod.exe", `deny file-write-data "/usr/\u202ecod.exe" (fs.write_file: outside the write roots)`, `writing "/usr/\u202ecod.exe"`},
		{[]string{"fs.future"}, "/my docs/\xff", `deny file-write "/my docs/\xff" (fs.future: outside the write roots)`, `writing "/my docs/\xff"`},
	} {
		d := LandlockDenial{Blockers: c.blockers, Path: c.path}
		if got := d.Line("outside the write roots"); got != c.line {
			t.Errorf("Line(%v, %q) = %q, want %q", c.blockers, c.path, got, c.line)
		}
		if got := d.Doing(); got != c.doing {
			t.Errorf("Doing(%v, %q) = %q, want %q", c.blockers, c.path, got, c.doing)
		}
	}
	long := "/" + strings.Repeat("é", 400)
	got := LandlockDenial{Blockers: []string{"fs.make_dir"}, Path: long}.Line("x")
	if !strings.Contains(got, "/"+strings.Repeat("é", 255)+"…") || strings.Contains(got, strings.Repeat("é", 256)) {
		t.Errorf("a long path is not cut at %d bytes on a character boundary: %q", MaxPath, got)
	}
	odd := "/" + strings.Repeat("\n", 600)
	got = LandlockDenial{Blockers: []string{"fs.make_dir"}, Path: odd}.Line("x")
	if want := `deny file-write-create "/` + strings.Repeat(`\n`, MaxPath-1) + `…" (fs.make_dir: x)`; got != want {
		t.Errorf("a long path of line feeds: %q, want %q", got, want)
	}
}
