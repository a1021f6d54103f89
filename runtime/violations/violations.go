// Package violations keeps what the sandbox refused
// (docs/reference.md#violations): the last 100 refusals with their command attribution and time, a
// running total, the ignoreViolations suppression, and the
// <sandbox_violations> block. It also writes the audit log, one JSON object
// per line: the start and exit of each run and, between them, every
// decision of the proxies, allowed or refused, and the writes the sandbox
// refused.
package violations

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/untrusted"
)

// Keep is how many refusals a Store holds (the reference's).
const Keep = 100

// An Entry is one refusal.
type Entry struct {
	// Line is the refusal in the reference's words, sanitised:
	// "deny network-outbound host:port (reason)".
	Line string `json:"line"`
	// Key is the command's attribution key, base64 (as in the proxy
	// user name); Command is the command text registered for it.
	Key     string    `json:"key,omitempty"`
	Command string    `json:"command,omitempty"`
	Time    time.Time `json:"time"`
	// Why explains a network refusal in one line: what was refused,
	// which rule decided and which settings file to edit. Set on the
	// entries of a run's Result (not kept by a Store).
	Why string `json:"why,omitempty"`
}

// A Store holds the refusals of a sandbox manager; it is safe for
// concurrent use. The zero value is ready.
type Store struct {
	mu       sync.Mutex
	entries  []Entry // a ring of at most Keep, oldest first after order()
	next     int
	total    int
	ignore   map[string][]string
	commands map[string]string // key -> command text
}

// Key is the attribution key of a command id (or, without one, of the
// command text): its first 100 UTF-16 code units, standard base64
// (docs/reference.md#violations). A surrogate pair is never split.
func Key(idOrText string) string {
	return base64.StdEncoding.EncodeToString([]byte(First100(idOrText)))
}

// First100 cuts s to its first 100 UTF-16 code units without splitting a
// surrogate pair.
func First100(s string) string {
	units := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if units+n > 100 {
			return s[:i]
		}
		units += n
	}
	return s
}

// SetIgnore replaces the ignoreViolations rules: command pattern -> line
// patterns, "*" for every command.
func (s *Store) SetIgnore(rules map[string][]string) {
	s.mu.Lock()
	s.ignore = rules
	s.mu.Unlock()
}

// Register names the command behind an attribution key, for
// ignoreViolations and for reports.
func (s *Store) Register(key, command string) {
	s.mu.Lock()
	if s.commands == nil {
		s.commands = map[string]string{}
	}
	s.commands[key] = command
	s.mu.Unlock()
}

// Add records a refusal unless ignoreViolations suppresses it; it returns
// the entry as stored and whether it was recorded.
func (s *Store) Add(line, key string, t time.Time) (Entry, bool) {
	line = netpolicy.SanitizeReason(line, 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	command, known := s.commands[key]
	if !known && key != "" {
		// A key this process never registered (a client spelling its
		// own user name): shown sanitised and cut, never trusted.
		if raw, err := base64.StdEncoding.DecodeString(key); err == nil && utf8.Valid(raw) {
			command = First100(netpolicy.SanitizeReason(string(raw), 0))
		}
	}
	e := Entry{Line: line, Key: key, Command: command, Time: t}
	if suppressed(s.ignore, command, line) {
		return e, false
	}
	if len(s.entries) < Keep {
		s.entries = append(s.entries, e)
	} else {
		s.entries[s.next] = e
		s.next = (s.next + 1) % Keep
	}
	s.total++
	return e, true
}

// suppressed applies ignoreViolations (docs/reference.md#violations): under "*",
// a pattern that is a substring of the line; under another key that is a
// substring of the command text, likewise.
func suppressed(rules map[string][]string, command, line string) bool {
	for cmd, patterns := range rules {
		if cmd != "*" && (command == "" || !strings.Contains(command, cmd)) {
			continue
		}
		for _, p := range patterns {
			if strings.Contains(line, p) {
				return true
			}
		}
	}
	return false
}

// Entries returns the refusals held, oldest first.
func (s *Store) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.entries))
	out = append(out, s.entries[s.next:]...)
	return append(out, s.entries[:s.next]...)
}

// For returns the refusals attributed to key, oldest first.
func (s *Store) For(key string) []Entry {
	var out []Entry
	for _, e := range s.Entries() {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

// Total is how many refusals were ever recorded (not only those held).
func (s *Store) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Block is the <sandbox_violations> block of entries, each line on its
// own, without a final newline; "" for none.
func Block(entries []Entry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<sandbox_violations>\n")
	for _, e := range entries {
		b.WriteString(e.Line)
		b.WriteByte('\n')
	}
	b.WriteString("</sandbox_violations>")
	return b.String()
}

// Annotate appends the block of key's refusals to a command's stderr, as
// the reference's annotateStderrWithSandboxFailures does; stderr is
// returned unchanged when there are none.
func (s *Store) Annotate(key, stderr string) string {
	block := Block(s.For(key))
	if block == "" {
		return stderr
	}
	return stderr + "\n" + block
}

// A Record is one decision in the audit log: a network decision of the
// proxies (Proxy, Host, Port), or a write the second layer refused on
// Linux (Layer, Path, Access). It names the command by its program and a
// hash, never by its text: arguments can carry secrets (a token in a
// curl header), and an audit log is kept and shared.
type Record struct {
	Time  time.Time `json:"time"`
	Proxy string    `json:"proxy,omitempty"` // http, connect, socks
	Host  string    `json:"host,omitempty"`
	Port  int       `json:"port,omitempty"`
	// Layer is "landlock" for a refused write; Path is the file, or the
	// directory of a new entry, as the command saw it; Access are the
	// rights Landlock refused ("fs.make_reg", ...).
	Layer  string `json:"layer,omitempty"`
	Path   string `json:"path,omitempty"`
	Access string `json:"access,omitempty"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
	// Rule is the rule that decided: the list entry that matched, or, for
	// a refused write, the settings key and place (or "default").
	Rule  string `json:"rule,omitempty"`
	Stage string `json:"stage"` // policy, guard, host, or landlock
	// Program is the base name of the command's first word.
	Program string `json:"program,omitempty"`
	// CommandHash is CommandHash of the command's attribution key: the
	// same for every decision of one command, and for the same command
	// text in another run.
	CommandHash string `json:"commandHash,omitempty"`
}

// CommandHash is a short hash of a command's attribution key: enough to
// tell commands apart in an audit log, not to recover their text.
func CommandHash(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// ProgramOf is the base name of the first word of a command's text.
func ProgramOf(text string) string {
	f := strings.Fields(text)
	if len(f) == 0 {
		return ""
	}
	return path.Base(f[0])
}

// A RunRecord is the start or the exit of a run in the audit log: who ran
// what under which settings, and how it ended. It records the program and
// the number of its arguments, never the arguments: they can carry
// secrets (a token in a header, a password in a URL), and an audit log is
// kept, shipped and shared. The settings file's hash says exactly which
// rules applied.
type RunRecord struct {
	Time           time.Time `json:"time"`
	Event          string    `json:"event"` // start or exit
	PID            int       `json:"pid"`   // of the process that ran it, the same in both records
	User           string    `json:"user"`
	UID            int       `json:"uid"`
	Cwd            string    `json:"cwd,omitempty"`
	Settings       string    `json:"settings"`
	SettingsSHA256 string    `json:"settingsSha256,omitempty"`
	Program        string    `json:"program"`
	Args           int       `json:"args"` // after the program
	// ExitStatus, in the exit record, is the status the run ended with.
	ExitStatus *int `json:"exitStatus,omitempty"`
}

// An AuditLog writes the records of the audit log as JSON lines, each
// with one Write: decisions (Record) and the start and exit of runs
// (RunRecord). It is safe for concurrent use. Write errors are kept and
// reported by Err, and no record is written after one: an audit log that
// silently stops is worse than none.
type AuditLog struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewAuditLog writes to w.
func NewAuditLog(w io.Writer) *AuditLog {
	return &AuditLog{w: w}
}

// Write appends r. Its Host and Path, which the command chose, are
// written as srt shows them (untrusted.Quote): JSON's own escapes leave
// DEL, C1 controls and bidirectional overrides raw, and turn a byte that
// is not UTF-8 into U+FFFD.
func (a *AuditLog) Write(r Record) {
	if r.Host != "" {
		r.Host = untrusted.Quote(r.Host)
	}
	if r.Path != "" {
		r.Path = untrusted.Quote(r.Path)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	a.write(b.Bytes(), err)
}

// WriteRun appends r, as json.Marshal writes it.
func (a *AuditLog) WriteRun(r RunRecord) {
	b, err := json.Marshal(r)
	a.write(append(b, '\n'), err)
}

// write appends the line b, unless encoding it failed (err) or an earlier
// write did.
func (a *AuditLog) write(b []byte, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return
	}
	if a.err = err; err == nil {
		_, a.err = a.w.Write(b)
	}
}

// Err is the first write error.
func (a *AuditLog) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
