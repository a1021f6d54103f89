package violations

import (
	"strings"
	"time"
	"unicode/utf8"

	"srt.dev/internal/untrusted"
)

// A FileRefusal is a write the sandbox's mounts refused (Linux: the write
// watch of runtime/sandbox): when, the path as the sandbox saw it, and
// what was refused, one of the keys of fileOps.
type FileRefusal struct {
	Time   time.Time
	Path   string
	Access string
}

// fileOps are, for each kind of refused write, the operation a violation
// line names (the words of macOS's Seatbelt) and what the command was
// doing, in words.
var fileOps = map[string]struct{ op, doing string }{
	"create":    {"file-write-create", "creating %s"},
	"mkdir":     {"file-write-create", "creating the directory %s"},
	"symlink":   {"file-write-create", "creating the symbolic link %s"},
	"link":      {"file-write-create", "creating the link %s"},
	"mknod":     {"file-write-create", "creating the special file %s"},
	"write":     {"file-write-data", "writing %s"},
	"truncate":  {"file-write-data", "truncating %s"},
	"chmod":     {"file-write-mode", "changing the mode of %s"},
	"times":     {"file-write-times", "changing the times of %s"},
	"remove":    {"file-write-unlink", "removing %s"},
	"rmdir":     {"file-write-unlink", "removing the directory %s"},
	"rename":    {"file-write-unlink", "moving %s away"},
	"rename-to": {"file-write-create", "moving a file to %s"},
}

// FileAccess reports whether a is an access a FileRefusal names.
func FileAccess(a string) bool {
	_, ok := fileOps[a]
	return ok
}

// Op is the operation of f's violation line.
func (f FileRefusal) Op() string {
	if o, ok := fileOps[f.Access]; ok {
		return o.op
	}
	return "file-write"
}

// Doing says in words what the command was refused, its path shown
// through untrusted.Quote.
func (f FileRefusal) Doing() string {
	p := untrusted.Quote(cut(f.Path))
	o, ok := fileOps[f.Access]
	if !ok {
		return "writing " + p
	}
	return strings.Replace(o.doing, "%s", p, 1)
}

// Line is f's violation line, in the shape of the network's and the
// second layer's: "deny OP PATH (ACCESS: why)".
func (f FileRefusal) Line(why string) string {
	return "deny " + f.Op() + " " + untrusted.Quote(cut(f.Path)) + " (" + f.Access + ": " + why + ")"
}

// cut cuts p to MaxPath bytes, on a character's boundary.
func cut(p string) string {
	if len(p) <= MaxPath {
		return p
	}
	i := MaxPath
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	return p[:i] + "…"
}
