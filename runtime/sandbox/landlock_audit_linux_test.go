package sandbox

import (
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/violations"
)

// auditMessage frames a record as the kernel's multicast group delivers
// it: a netlink header, the text, no padding.
func auditMessage(typ int, text string) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(text))
	binary.NativeEndian.PutUint32(b[0:], uint32(unix.NLMSG_HDRLEN+len(text)))
	binary.NativeEndian.PutUint16(b[4:], uint16(typ))
	return append(b, text...)
}

// TestLandlockAttribution feeds a reader the records of two domains in
// the order the kernel logs them: a domain is this run's only when a
// thread of the sandbox's first process made it, named with the run's
// token; the refusals of any other domain are never kept.
func TestLandlockAttribution(t *testing.T) {
	const A, D = violations.AuditLandlockAccess, violations.AuditLandlockDomain
	feed := func(a *landlockAudit, recs ...string) {
		for i := 0; i+1 < len(recs); i += 2 {
			typ := A
			if recs[i] == "D" {
				typ = D
			}
			a.take(auditMessage(typ, recs[i+1]))
		}
	}
	newAudit := func() *landlockAudit {
		return &landlockAudit{token: "0123456789abcde", seen: map[string]bool{}}
	}
	paths := func(a *landlockAudit) []string {
		var out []string
		for _, d := range a.denials {
			out = append(out, d.Domain+" "+d.Path)
		}
		return out
	}

	// Before the threads are known, nothing is this run's.
	a := newAudit()
	feed(a, "A", `audit(1.000:1): domain=aa blockers=fs.make_reg path="/dev" dev="tmpfs" ino=1`,
		"D", `audit(1.000:1): domain=aa status=allocated mode=enforcing pid=10 uid=0 exe="/srt" comm="0123456789abcde"`)
	a.tids = map[int]bool{10: true, 11: true}
	feed(a,
		// Another process's domain, named as this run's token, made by a
		// thread that is not the init step's.
		"A", `audit(2.000:2): domain=bb blockers=fs.write_file path="/etc/passwd" dev="vda" ino=5`,
		"D", `audit(2.000:2): domain=bb status=allocated mode=enforcing pid=99 uid=0 exe="/x" comm="0123456789abcde"`,
		// A thread of the init step, with another name.
		"A", `audit(2.500:3): domain=cc blockers=fs.write_file path="/etc/hosts" dev="vda" ino=6`,
		"D", `audit(2.500:3): domain=cc status=allocated mode=enforcing pid=11 uid=0 exe="/srt" comm="5"`,
		// This run's: two records in the event before the domain's.
		"A", `audit(3.000:4): domain=dd blockers=fs.make_reg path="/proc/9" dev="proc" ino=7`,
		"A", `audit(3.000:4): domain=dd blockers=fs.write_file path="/proc/9/oom_score_adj" dev="proc" ino=8`,
		"D", `audit(3.000:4): domain=dd status=allocated mode=enforcing pid=11 uid=0 exe="/srt" comm="0123456789abcde"`,
		"A", `audit(4.000:5): domain=bb blockers=fs.make_dir path="/var" dev="vda" ino=9`,
		"A", `audit(4.000:6): domain=dd blockers=fs.make_dir path="/dev" dev="tmpfs" ino=1`,
		"A", `audit(4.000:7): domain=dd blockers=fs.make_dir path="/dev" dev="tmpfs" ino=1`,
		"A", `audit(4.000:8): domain=dd blockers=fs.make_reg path="/dev" dev="tmpfs" ino=1`,
		"A", `audit(4.000:9): domain=dd blockers=scope.signal opid=1 ocomm="systemd"`,
		"D", `audit(5.000:10): domain=bb status=deallocated denials=7`,
	)
	want := []string{"dd /proc/9", "dd /proc/9/oom_score_adj", "dd /dev", "dd /dev"}
	if got := paths(a); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("kept %q, want %q", got, want)
	}
	if a.denials[2].Blockers[0] != "fs.make_dir" || a.denials[3].Blockers[0] != "fs.make_reg" {
		t.Errorf("the two /dev lines: %v", a.denials[2:])
	}
	if a.logged != 5 {
		t.Errorf("logged = %d, want 5 (the repeated make_dir counts)", a.logged)
	}
	// A released domain is not a new one.
	feed(a, "D", `audit(6.000:11): domain=dd status=deallocated denials=6`,
		"A", `audit(7.000:12): domain=ee blockers=fs.make_reg path="/x" dev="vda" ino=3`,
		"D", `audit(7.000:12): domain=ee status=allocated mode=enforcing pid=11 uid=0 exe="/srt" comm="0123456789abcde"`)
	if len(a.denials) != 4 || a.domain != "dd" {
		t.Errorf("a second domain made by the init step's thread was taken: %q", paths(a))
	}
}

// BenchmarkLandlockAuditHost is what reading the second layer's refusals
// costs srt on the host for a run that is refused nothing, with the
// kernel's audit on: asking the audit's status, joining its group (the
// kernel logs the listener), listing the init step's threads (here this
// process's), then waiting for the kernel's queue to be empty and leaving
// the group. Joining and leaving wait while the kernel's queue is full:
// on a host without auditd every record goes to the console.
func BenchmarkLandlockAuditHost(b *testing.B) {
	testenv.KernelAudit(b)
	abi := initstep.ABI()
	for i := 0; i < b.N; i++ {
		a, why := openLandlockAudit(abi)
		if a == nil {
			b.Fatal(why)
		}
		if err := a.expect(os.Getpid()); err != nil {
			b.Fatal(err)
		}
		if d, _, _, _ := a.finish(); len(d) != 0 {
			b.Fatalf("refusals of another process: %v", d)
		}
	}
}
