package seatbelt

import (
	"fmt"
	"strings"
)

// A Question is one operation Decide is asked about, and its object.
type Question struct {
	// Op is the operation: file-read-data, file-write-data,
	// file-write-unlink, network-outbound, mach-lookup, ...
	Op string
	// Path is a file's path as the kernel resolved it (no "..", /tmp,
	// /var and /etc in their /private form: policy.MacKernelPath); Dir
	// says it is a directory.
	Path string
	Dir  bool
	// Socket is a unix socket's path, resolved likewise.
	Socket string
	// Addr is "host:port" for an IP network operation.
	Addr string
	// Name is a Mach service.
	Name string
}

// Operations a Question asks about.
const (
	OpReadData  = "file-read-data"    // reading a file's content
	OpWriteData = "file-write-data"   // changing a file's content
	OpCreate    = "file-write-create" // creating a file or directory
	OpUnlink    = "file-write-unlink" // removing or renaming one
	OpSocketOut = "network-outbound"  // connecting
)

// A Verdict is Decide's answer.
type Verdict struct {
	Allow bool
	// Rule is the index in Program.Rules of the rule that decided, -1
	// when none matched (a program without (deny default)).
	Rule int
	// Filters are the indices of the deciding rule's filters that match,
	// in order; none for a rule without filters.
	Filters []int
}

// Params are the sandbox-exec parameters of NAME=VALUE pairs (as
// Host.Defines and HostDefines return them).
func Params(defines []string) map[string]string {
	out := map[string]string{}
	for _, d := range defines {
		k, v, _ := strings.Cut(d, "=")
		out[k] = v
	}
	return out
}

// Decide answers q with Seatbelt's semantics
// (docs/reference.md#macos-profile-layout, docs/reference.md#macos-filters),
// given the parameters sandbox-exec is run with:
//
//   - the rules are read in order and, for one operation, the last rule
//     that matches decides; "(deny default)" matches every operation;
//   - a rule names operations; a name ending in "*" covers every operation
//     it is the prefix of ("file-read*" covers file-read-data), any other
//     name itself only;
//   - a rule without filters matches every object; with filters, it
//     matches when any one of them does;
//   - subpath matches the path and everything below it, literal the path
//     only, regex (and path-regex) its regular expression over the whole
//     path; require-all and require-not combine filters;
//   - (param "X") is the parameter's value, string-append concatenates.
//
// What it cannot know, and so assumes: that sandbox-exec's regex dialect
// reads the constructs the profiles use (^ $ ( ) | ? * . [set] and
// backslash escapes) as Go's regexp does, and that the path Seatbelt
// checks is the path the kernel resolved. None of this has been observed
// on a real Mac. An undefined parameter is an error: sandbox-exec would
// refuse the profile.
func (p *Program) Decide(q Question, params map[string]string) (Verdict, error) {
	// The last rule that matches decides: the rules are read from the
	// end, and the first that matches is the answer.
	for i := len(p.Rules) - 1; i >= 0; i-- {
		r := p.Rules[i]
		if !coversOp(r.Ops, q.Op) {
			continue
		}
		var hits []int
		for j, f := range r.Filters {
			ok, err := Match(f, q, params)
			if err != nil {
				return Verdict{Rule: -1}, fmt.Errorf("rule %d: %v", i, err)
			}
			if ok {
				hits = append(hits, j)
			}
		}
		if len(r.Filters) == 0 || len(hits) > 0 {
			return Verdict{Allow: r.Action == Allow, Rule: i, Filters: hits}, nil
		}
	}
	return Verdict{Rule: -1}, nil
}

// coversOp reports whether a rule naming ops covers op.
func coversOp(ops []string, op string) bool {
	for _, name := range ops {
		if name == op || name == "default" {
			return true
		}
		if base, ok := strings.CutSuffix(name, "*"); ok && strings.HasPrefix(op, base) {
			return true
		}
	}
	return false
}

// Match reports whether filter f matches q's object. A filter on what q
// does not ask about (a path filter for a Mach service, an Other filter)
// does not match.
func Match(f Filter, q Question, params map[string]string) (bool, error) {
	switch f.Kind {
	case Literal, Subpath, Regex, PathRegex:
		if q.Path == "" {
			return false, nil
		}
		s, ok := f.Str.Value(params)
		if !ok {
			return false, fmt.Errorf("%s: a parameter is not defined", f)
		}
		switch f.Kind {
		case Literal:
			return q.Path == s, nil
		case Subpath:
			return q.Path == s || s == "/" || strings.HasPrefix(q.Path, strings.TrimSuffix(s, "/")+"/"), nil
		}
		re, err := compileOnce(s)
		if err != nil {
			return false, fmt.Errorf("regex %q: %v", s, err)
		}
		return re.MatchString(q.Path), nil
	case RequireAll:
		for _, a := range f.Args {
			if ok, err := Match(a, q, params); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case RequireNot:
		ok, err := Match(f.Args[0], q, params)
		return !ok, err
	case LocalUnix, RemoteUnix:
		if q.Socket == "" {
			return false, nil
		}
		return Match(f.Args[0], Question{Path: q.Socket}, params)
	case LocalIP, RemoteIP:
		if q.Addr == "" {
			return false, nil
		}
		s, ok := f.Str.Value(params)
		if !ok {
			return false, fmt.Errorf("%s: a parameter is not defined", f)
		}
		return ipMatch(s, q.Addr), nil
	case GlobalName, GlobalNamePrefix:
		s, ok := f.Str.Value(params)
		switch {
		case q.Name == "" || !ok:
			return false, nil
		case f.Kind == GlobalName:
			return q.Name == s, nil
		}
		return strings.HasPrefix(q.Name, s), nil
	case VnodeType:
		return q.Path != "" && (f.Text == "DIRECTORY" && q.Dir || f.Text == "REGULAR-FILE" && !q.Dir), nil
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
