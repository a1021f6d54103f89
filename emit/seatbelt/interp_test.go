package seatbelt

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// This file is a test-only interpreter of a Seatbelt profile: it answers
// whether an operation on a concrete path (or unix socket, or address) is
// allowed, given the sandbox-exec parameters. It reads the profile's text
// with the reader of sexpr_test.go and knows nothing of the emitter; its
// model of Seatbelt is the one docs/reference.md#macos-profile-layout and docs/reference.md#macos-filters give:
//
//   - the rules are read in order and, for one operation, the last rule
//     that matches decides; (deny default) makes an unmatched operation
//     denied;
//   - a rule names operations; "file-read*" covers every file-read-
//     operation, "file-write*" every file-write- one, "network*" every
//     network- one; any other name covers itself only;
//   - a rule without filters matches every path; with filters, it matches
//     when any one of them does (they are alternatives);
//   - subpath matches the path and everything below it, literal the path
//     only, regex (and path-regex) its whole-path regular expression;
//     require-all, require-any and require-not combine filters;
//   - (param "X") is the -D value the runtime passes, string-append
//     concatenates.
//
// What it cannot know, and so assumes: that sandbox-exec's regex dialect
// reads the constructs the profiles use (^ $ ( ) | ? * . [set] and
// backslash escapes) as Go's regexp does; that the path Seatbelt checks is
// the path the kernel resolved (the fixed macOS symlinks /tmp, /var and
// /etc lead into /private, see resolveMac); and that the vnode type of a
// probed path is a regular file unless the caller says it is a directory.
// None of this has been observed on a real Mac.

// An sbRule is one (allow|deny OPS FILTERS...) form of a profile.
type sbRule struct {
	allow   bool
	ops     []string
	filters []node
	line    int // 1-based line of the rule in the profile, for reports
}

// sbProfile is a parsed profile.
type sbProfile struct {
	rules []sbRule
}

// parseSB reads a profile into its rules. Forms other than allow and deny
// ((version 1)) are skipped; (with message ...) is not a filter.
func parseSB(src string) (*sbProfile, error) {
	forms, err := readProfile(src)
	if err != nil {
		return nil, err
	}
	p := &sbProfile{}
	for _, f := range forms {
		if !isForm(f, "allow") && !isForm(f, "deny") {
			continue
		}
		r := sbRule{allow: f.list[0].atom == "allow", line: 1 + strings.Count(src[:f.pos], "\n")}
		i := 1
		for ; i < len(f.list) && !f.list[i].isList; i++ {
			r.ops = append(r.ops, f.list[i].atom)
		}
		for ; i < len(f.list); i++ {
			if isForm(f.list[i], "with") {
				continue
			}
			r.filters = append(r.filters, f.list[i])
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// opCovers reports whether the operation name of a rule covers op.
func opCovers(name, op string) bool {
	if name == op || name == "default" {
		return true
	}
	if base, ok := strings.CutSuffix(name, "*"); ok {
		return strings.HasPrefix(op, base)
	}
	return false
}

// A probe is what an operation is asked about.
type probe struct {
	path   string // a file path, already resolved as the kernel would
	dir    bool   // the path is a directory (vnode-type DIRECTORY)
	socket string // a unix socket path, for network operations
	ip     string // "host:port", for network operations
	name   string // a Mach service, for mach-lookup
}

// sbEnv evaluates a profile with the sandbox-exec parameters.
type sbEnv struct {
	params map[string]string
	re     map[string]*regexp.Regexp
	strs   map[int]string // a path filter's string, by its offset in the profile
}

func newEnv(defines []string) *sbEnv {
	env := &sbEnv{params: map[string]string{}, re: map[string]*regexp.Regexp{}, strs: map[int]string{}}
	for _, d := range defines {
		k, v, _ := strings.Cut(d, "=")
		env.params[k] = v
	}
	return env
}

// decide returns whether op on pr is allowed and the rule that decided
// (nil for none, which cannot happen in a profile that starts with
// (deny default)).
func (env *sbEnv) decide(p *sbProfile, op string, pr probe) (bool, *sbRule, error) {
	var last *sbRule
	for i := range p.rules {
		r := &p.rules[i]
		covered := false
		for _, o := range r.ops {
			if opCovers(o, op) {
				covered = true
				break
			}
		}
		if !covered {
			continue
		}
		ok := len(r.filters) == 0
		for _, f := range r.filters {
			m, err := env.match(f, pr)
			if err != nil {
				return false, nil, fmt.Errorf("line %d: %v", r.line, err)
			}
			if m {
				ok = true
				break
			}
		}
		if ok {
			last = r
		}
	}
	if last == nil {
		return false, nil, nil
	}
	return last.allow, last, nil
}

// match evaluates one filter for a probe. Filters about other things than
// paths and addresses (global-name, sysctl-name, target, ...) never match
// a path probe; the operations they go with are not asked about here.
func (env *sbEnv) match(f node, pr probe) (bool, error) {
	if !f.isList || len(f.list) == 0 {
		return false, fmt.Errorf("offset %d: not a filter", f.pos)
	}
	args := f.list[1:]
	switch f.list[0].atom {
	case "subpath", "literal", "regex", "path-regex":
		if pr.path == "" {
			return false, nil
		}
		return env.pathFilter(f.list[0].atom, args, pr.path)
	case "require-all":
		for _, a := range args {
			if m, err := env.match(a, pr); err != nil || !m {
				return false, err
			}
		}
		return true, nil
	case "require-any":
		for _, a := range args {
			if m, err := env.match(a, pr); err != nil || m {
				return m, err
			}
		}
		return false, nil
	case "require-not":
		m, err := env.match(args[0], pr)
		return !m, err
	case "global-name", "global-name-prefix":
		if pr.name == "" || len(args) != 1 {
			return false, nil
		}
		want, err := env.str(args[0])
		if err != nil {
			return false, err
		}
		if f.list[0].atom == "global-name" {
			return pr.name == want, nil
		}
		return strings.HasPrefix(pr.name, want), nil
	case "vnode-type":
		return pr.path != "" && args[0].atom == "DIRECTORY" && pr.dir ||
			pr.path != "" && args[0].atom == "REGULAR-FILE" && !pr.dir, nil
	case "remote", "local":
		switch args[0].atom {
		case "unix-socket":
			if pr.socket == "" {
				return false, nil
			}
			return env.match(args[1], probe{path: pr.socket})
		case "ip":
			if pr.ip == "" {
				return false, nil
			}
			want, err := env.str(args[1])
			if err != nil {
				return false, err
			}
			return ipMatch(want, pr.ip), nil
		}
	}
	return false, nil
}

// ipMatch matches Seatbelt's "host:port" address filter, where host is
// "*" or "localhost" and port "*" or a number.
func ipMatch(want, got string) bool {
	wh, wp, _ := strings.Cut(want, ":")
	gh, gp, _ := strings.Cut(got, ":")
	hostOK := wh == "*" || wh == gh || wh == "localhost" && (gh == "127.0.0.1" || gh == "::1")
	return hostOK && (wp == "*" || wp == gp)
}

func (env *sbEnv) pathFilter(kind string, args []node, p string) (bool, error) {
	if len(args) != 1 {
		return false, fmt.Errorf("%s takes one string", kind)
	}
	s, ok := env.strs[args[0].pos]
	if !ok {
		var err error
		if s, err = env.str(args[0]); err != nil {
			return false, err
		}
		env.strs[args[0].pos] = s
	}
	switch kind {
	case "literal":
		return p == s, nil
	case "subpath":
		return p == s || s == "/" || strings.HasPrefix(p, strings.TrimSuffix(s, "/")+"/"), nil
	}
	re, ok := env.re[s]
	if !ok {
		var err error
		re, err = regexp.Compile(s)
		if err != nil {
			return false, fmt.Errorf("regex %q: %v", s, err)
		}
		env.re[s] = re
	}
	return re.MatchString(p), nil
}

// str evaluates a string expression: a literal, (param "X") or
// (string-append ...). An undefined parameter is an error: sandbox-exec
// would refuse the profile.
func (env *sbEnv) str(n node) (string, error) {
	switch {
	case n.str != nil:
		return *n.str, nil
	case isForm(n, "param") && len(n.list) == 2 && n.list[1].str != nil:
		v, ok := env.params[*n.list[1].str]
		if !ok {
			return "", fmt.Errorf("parameter %q is not defined", *n.list[1].str)
		}
		return v, nil
	case isForm(n, "string-append"):
		var b strings.Builder
		for _, a := range n.list[1:] {
			s, err := env.str(a)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("offset %d: not a string expression", n.pos)
}

// resolveMac is the path the kernel hands Seatbelt for p: macOS's fixed
// top-level symlinks /tmp, /var and /etc lead into /private. Other
// symlinks are a fact of the host the tests do not model.
func resolveMac(p string) string {
	for _, d := range []string{"/tmp", "/var", "/etc"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/private" + p
		}
	}
	return p
}

// The file operations the agreement asks about.
const (
	opReadData  = "file-read-data"
	opWriteData = "file-write-data"
	opCreate    = "file-write-create"
	opUnlink    = "file-write-unlink"
	opSocketOut = "network-outbound"
)

// Interp is the interpreter with one profile and one host's parameters,
// exported for the agreement test (package seatbelt_test, which may
// import the runtime; this package may not).
type Interp struct {
	p   *sbProfile
	env *sbEnv
}

// NewInterp parses profile and takes the parameters sandbox-exec would be
// given (Host.Defines, as the runtime passes them).
func NewInterp(profile []byte, defines []string) (*Interp, error) {
	p, err := parseSB(string(profile))
	if err != nil {
		return nil, err
	}
	return &Interp{p: p, env: newEnv(defines)}, nil
}

// File answers op on the file at path (as the user spells it: it is
// resolved here as the kernel would) and returns the deciding rule's line.
func (in *Interp) File(op, path string) (bool, int, error) {
	return in.line(in.env.decide(in.p, op, probe{path: resolveMac(path)}))
}

// Socket answers connecting to the unix socket at path.
func (in *Interp) Socket(path string) (bool, int, error) {
	return in.line(in.env.decide(in.p, opSocketOut, probe{socket: resolveMac(path)}))
}

// Outbound answers an outbound connection to "host:port".
func (in *Interp) Outbound(addr string) (bool, int, error) {
	return in.line(in.env.decide(in.p, opSocketOut, probe{ip: addr}))
}

// Bind answers binding a local address "host:port".
func (in *Interp) Bind(addr string) (bool, int, error) {
	return in.line(in.env.decide(in.p, "network-bind", probe{ip: addr}))
}

// MachLookup answers looking up the Mach service name.
func (in *Interp) MachLookup(name string) (bool, int, error) {
	return in.line(in.env.decide(in.p, "mach-lookup", probe{name: name}))
}

// Op answers an operation without an object (appleevent-send,
// pseudo-tty).
func (in *Interp) Op(op string) (bool, int, error) {
	return in.line(in.env.decide(in.p, op, probe{}))
}

func (in *Interp) line(ok bool, r *sbRule, err error) (bool, int, error) {
	if r == nil {
		return ok, 0, err
	}
	return ok, r.line, err
}

// The operations, exported for the agreement test.
const (
	OpReadData  = opReadData
	OpWriteData = opWriteData
	OpCreate    = opCreate
	OpUnlink    = opUnlink
)

// TestInterp pins the interpreter's model on a hand-written profile, so
// that the agreement test rests on a reader that can be wrong visibly.
func TestInterp(t *testing.T) {
	profile := `(version 1)
(deny default (with message (param "LOG_TAG")))
(allow file-read*)
(deny file-read*
  (subpath (string-append (param "HOME") "/.ssh"))
  (regex (string-append "^" (param "CWD_REGEX") "/(.*/)?\\.env(/.*)?$"))
  (with message (param "LOG_TAG")))
(allow file-read* (subpath (string-append (param "HOME") "/.ssh/pub")))
(deny file-read* (require-all (subpath (param "HOME")) (require-not (subpath (param "CWD")))))
(allow file-write* (subpath (param "CWD")) (subpath "/tmp") (subpath "/private/tmp"))
(deny file-write-unlink (literal (param "CWD")))
(allow network-outbound (remote unix-socket (subpath "/private/var/run/x.sock")))
(allow network-outbound (remote ip (string-append "localhost:" (param "HTTP_PROXY_PORT"))))
`
	in, err := NewInterp([]byte(profile), Host{Home: "/Users/me", Cwd: "/Users/me/p.j", HTTPPort: 4000}.Defines())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op, path string
		want     bool
		line     int
	}{
		{OpReadData, "/etc/passwd", true, 3},
		{OpReadData, "/Users/me/.ssh/id", false, 9},      // the later deny of HOME outside CWD
		{OpReadData, "/Users/me/.sshx", false, 9},        // not below .ssh, but below HOME
		{OpReadData, "/Users/me/p.j/a/.env/x", false, 4}, // the regex, with its subtree tail
		{OpReadData, "/Users/me/pxj/.env", false, 9},     // CWD_REGEX escapes the dot
		{OpReadData, "/Users/me/p.j/src", true, 3},       // require-not keeps CWD open
		{OpReadData, "/Users/me/p.j/.envrc", true, 3},    // "\\.env(/.*)?$" is not a prefix match
		{OpWriteData, "/Users/me/p.j/f", true, 10},       // a write root
		{OpWriteData, "/Users/me/f", false, 2},           // (deny default)
		{OpWriteData, "/tmp/x", true, 10},                // resolved to /private/tmp/x
		{OpUnlink, "/Users/me/p.j", false, 11},           // the literal only
		{OpUnlink, "/Users/me/p.j/f", true, 10},          // file-write* covers unlink
	}
	for _, tt := range tests {
		got, line, err := in.File(tt.op, tt.path)
		if err != nil || got != tt.want || line != tt.line {
			t.Errorf("%s %s = %v (line %d, %v), want %v (line %d)", tt.op, tt.path, got, line, err, tt.want, tt.line)
		}
	}
	for sock, want := range map[string]bool{"/var/run/x.sock": true, "/var/run/y.sock": false} {
		if got, _, err := in.Socket(sock); err != nil || got != want {
			t.Errorf("socket %s = %v %v, want %v", sock, got, err, want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:4000": true, "127.0.0.1:4001": false, "1.2.3.4:4000": false} {
		if got, _, err := in.Outbound(addr); err != nil || got != want {
			t.Errorf("outbound %s = %v %v, want %v", addr, got, err, want)
		}
	}
	mach, err := NewInterp([]byte(`(version 1)
(deny default)
(allow mach-lookup (global-name "com.a") (global-name-prefix "org.b."))
(allow pseudo-tty)
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"com.a": true, "com.ab": false, "org.b.x": true, "org.bx": false} {
		if got, _, err := mach.MachLookup(name); err != nil || got != want {
			t.Errorf("mach-lookup %s = %v %v, want %v", name, got, err, want)
		}
	}
	if ok, _, _ := mach.Op("pseudo-tty"); !ok {
		t.Error("pseudo-tty denied")
	}
	if ok, _, _ := mach.Op("appleevent-send"); ok {
		t.Error("appleevent-send allowed by (deny default)")
	}
	if _, _, err := (&Interp{p: in.p, env: newEnv(nil)}).File(OpReadData, "/x"); err == nil {
		t.Error("an undefined parameter was not an error")
	}
}
