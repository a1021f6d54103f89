package violations

// Landlock's audit records (Documentation/admin-guide/LSM/landlock.rst in
// the kernel's source, Linux 6.15 and later): the Linux runtime reads
// them from the kernel's audit multicast group and reports the writes the
// second layer refused. Everything here parses text the kernel wrote
// about a sandboxed command's requests: the paths are the command's
// choice.

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"srt.dev/internal/untrusted"
)

// The record types (include/uapi/linux/audit.h).
const (
	AuditLandlockAccess = 1423 // AUDIT_LANDLOCK_ACCESS: a refused request
	AuditLandlockDomain = 1424 // AUDIT_LANDLOCK_DOMAIN: a domain's allocation or release
)

// An AuditRecord is one record of the kernel's audit as the NETLINK_AUDIT
// multicast group delivers it: its type, then "audit(SECONDS.MILLIS:SERIAL):
// name=value ...". Records of one event share the serial.
type AuditRecord struct {
	Type   int
	Time   time.Time
	Serial uint64
	// Fields are the record's values, decoded: quotes removed, the
	// hexadecimal form of an untrusted string (one with a space, a quote
	// or a byte outside printable ASCII) turned back into its bytes. A
	// field that repeats keeps its first value.
	Fields map[string]string
}

// untrustedFields are the fields the kernel writes with
// audit_log_untrustedstring: quoted, or in hexadecimal when the string
// has a character that quoting cannot carry.
var untrustedFields = map[string]bool{"path": true, "name": true, "dev": true, "exe": true, "comm": true, "ocomm": true}

// ParseAuditRecord parses the text of a record of type typ; false when it
// is not of the form above. An untrusted field in neither form (the
// kernel's "<too_long>") is left out.
func ParseAuditRecord(typ int, text string) (AuditRecord, bool) {
	text = strings.TrimRight(text, "\x00\n")
	rest, ok := strings.CutPrefix(text, "audit(")
	if !ok {
		return AuditRecord{}, false
	}
	stamp, rest, ok := strings.Cut(rest, "): ")
	if !ok {
		stamp, ok = strings.CutSuffix(rest, "):")
		rest = ""
		if !ok {
			return AuditRecord{}, false
		}
	}
	when, serial, ok := strings.Cut(stamp, ":")
	if !ok {
		return AuditRecord{}, false
	}
	sec, milli, _ := strings.Cut(when, ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	ms, err2 := strconv.ParseInt(milli, 10, 64)
	n, err3 := strconv.ParseUint(serial, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(milli) != 3 {
		return AuditRecord{}, false
	}
	r := AuditRecord{Type: typ, Time: time.Unix(s, ms*int64(time.Millisecond)), Serial: n, Fields: map[string]string{}}
	// A quoted value holds no space and no quote (the kernel writes any
	// string that has one in hexadecimal), so fields split at spaces.
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := r.Fields[k]; dup {
			continue
		}
		if q, ok := strings.CutPrefix(v, `"`); ok {
			if v, ok = strings.CutSuffix(q, `"`); !ok {
				continue
			}
		} else if untrustedFields[k] {
			b, err := hex.DecodeString(v)
			if err != nil || v == "" {
				continue
			}
			v = string(b)
		}
		r.Fields[k] = v
	}
	return r, true
}

// A LandlockDenial is an AUDIT_LANDLOCK_ACCESS record of a file-system
// request: which domain refused it, the access rights it lacked
// ("fs.write_file", "fs.make_reg", ...), and the file or directory, as
// the process that asked saw it (for a new entry, the directory it was to
// be made in).
type LandlockDenial struct {
	Domain   string
	Blockers []string
	Path     string
	Time     time.Time
	Serial   uint64
}

// LandlockAccess reads a refused file-system request from r; false when r
// is another record, refuses something else (a signal, an abstract
// socket, a network port), or names no absolute path.
func LandlockAccess(r AuditRecord) (LandlockDenial, bool) {
	if r.Type != AuditLandlockAccess || r.Fields["domain"] == "" {
		return LandlockDenial{}, false
	}
	blockers := strings.Split(r.Fields["blockers"], ",")
	for _, b := range blockers {
		if !strings.HasPrefix(b, "fs.") {
			return LandlockDenial{}, false
		}
	}
	p := r.Fields["path"]
	if !strings.HasPrefix(p, "/") {
		return LandlockDenial{}, false
	}
	return LandlockDenial{Domain: r.Fields["domain"], Blockers: blockers, Path: p, Time: r.Time, Serial: r.Serial}, true
}

// A LandlockDomain is an AUDIT_LANDLOCK_DOMAIN record. An allocated
// domain (the record follows the first refusal logged for it) names the
// thread that made it (PID, in the kernel's initial PID namespace) and
// that thread's name then (Comm); a deallocated one says how many
// requests the domain refused in all (Denials), logged or not. A domain's
// id is never reused while the system runs.
type LandlockDomain struct {
	ID        string
	Allocated bool
	PID       int
	Comm      string
	Denials   uint64
	Serial    uint64
}

// LandlockDomainRecord reads r; false when it is not a well-formed
// AUDIT_LANDLOCK_DOMAIN record.
func LandlockDomainRecord(r AuditRecord) (LandlockDomain, bool) {
	d := LandlockDomain{ID: r.Fields["domain"], Serial: r.Serial}
	if r.Type != AuditLandlockDomain || d.ID == "" {
		return LandlockDomain{}, false
	}
	switch r.Fields["status"] {
	case "allocated":
		pid, err := strconv.Atoi(r.Fields["pid"])
		comm, ok := r.Fields["comm"]
		if err != nil || pid <= 0 || !ok {
			return LandlockDomain{}, false
		}
		d.Allocated, d.PID, d.Comm = true, pid, comm
	case "deallocated":
		n, err := strconv.ParseUint(r.Fields["denials"], 10, 64)
		if err != nil {
			return LandlockDomain{}, false
		}
		d.Denials = n
	default:
		return LandlockDomain{}, false
	}
	return d, true
}

// landlockOps are, for each file-system access right, the operation a
// violation line names (the words of macOS's Seatbelt where it has one)
// and what the command was doing, in words.
var landlockOps = map[string]struct{ op, doing string }{
	"fs.write_file":  {"file-write-data", "writing %s"},
	"fs.truncate":    {"file-write-data", "truncating %s"},
	"fs.make_reg":    {"file-write-create", "creating a file in %s"},
	"fs.make_dir":    {"file-write-create", "creating a directory in %s"},
	"fs.make_sym":    {"file-write-create", "creating a symbolic link in %s"},
	"fs.make_sock":   {"file-write-create", "creating a socket in %s"},
	"fs.make_fifo":   {"file-write-create", "creating a FIFO in %s"},
	"fs.make_char":   {"file-write-create", "creating a device in %s"},
	"fs.make_block":  {"file-write-create", "creating a device in %s"},
	"fs.remove_file": {"file-write-unlink", "removing a file from %s"},
	"fs.remove_dir":  {"file-write-unlink", "removing a directory from %s"},
	"fs.refer":       {"file-write-rename", "moving or linking a file into or out of %s"},
	"fs.ioctl_dev":   {"file-ioctl", "an ioctl on the device %s"},
}

// Op is the operation of a violation line for d: that of its first
// access right (the kernel lists them in the order of their bits:
// writing, removing, making, then refer, truncate, ioctl).
func (d LandlockDenial) Op() string {
	if o, ok := landlockOps[d.Blockers[0]]; ok {
		return o.op
	}
	return "file-write"
}

// Doing says in words what the command was refused, with its path shown
// through untrusted.Quote.
func (d LandlockDenial) Doing() string {
	p := untrusted.Quote(d.Path)
	o, ok := landlockOps[d.Blockers[0]]
	if !ok {
		return "writing " + p
	}
	return strings.Replace(o.doing, "%s", p, 1)
}

// MaxPath is how much of a path a violation line shows: the command
// chooses it, up to 4096 bytes.
const MaxPath = 512

// Line is the violation line of d, in the shape of the network's:
// "deny OP PATH (BLOCKERS: why)", the path cut to MaxPath bytes and shown
// through untrusted.Quote.
func (d LandlockDenial) Line(why string) string {
	return "deny " + d.Op() + " " + untrusted.Quote(cut(d.Path)) + " (" + strings.Join(d.Blockers, ",") + ": " + why + ")"
}
