package seatbelt

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
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

// Decide answers q with the parameters sandbox-exec is run with: the
// answer of p.Decider(params).Decide(q), which indexes the whole program
// for this one question. A Decider answers many questions.
func (p *Program) Decide(q Question, params map[string]string) (Verdict, error) {
	return p.Decider(params).Decide(q)
}

// A Decider answers questions about a program, given the parameters
// sandbox-exec is run with. It holds the program's filters indexed by the
// paths they can match, so that a file question evaluates the filters
// that may match its path and not every filter of every rule:
//
//   - a literal filter matches its path only, a subpath filter its path
//     and the paths below it: they are found under those paths;
//   - a regex (or path-regex) filter anchored with "^" matches only paths
//     that start with its literal prefix: it is found below the
//     directory that prefix ends in. One without such a prefix is
//     evaluated for every path question;
//   - a require-all filter matches only where its first filter does, and
//     is found where that one is;
//   - a filter on what a path question does not carry (a socket, an
//     address, a Mach service), a vnode type, a require-not, one whose
//     parameter is not defined and one whose regex does not compile are
//     evaluated for every question that reaches its rule.
//
// The filters left out of a question are those Match answers false for,
// without an error: the verdict, its matching filters and the first error
// are those of reading every filter of every rule (the linear reading,
// which the tests compare this with). A Decider does not change once
// made; it may answer from several goroutines.
type Decider struct {
	p      *Program
	params map[string]string
	// exact holds the filters that match the path that is their key;
	// below those that may match only paths strictly below their key
	// (that start with the key and "/").
	exact, below map[string][]ref
	// always are, for each rule, the indices of the filters evaluated for
	// every question that reaches it, and paths those evaluated for every
	// question with a path.
	always, paths [][]int32
}

// A ref is filter Filter of rule Rule.
type ref struct{ Rule, Filter int32 }

// Decider indexes p's filters for the parameters params (see Decider).
// params must not change while the Decider is used.
func (p *Program) Decider(params map[string]string) *Decider {
	d := &Decider{p: p, params: params, exact: map[string][]ref{}, below: map[string][]ref{},
		always: make([][]int32, len(p.Rules)), paths: make([][]int32, len(p.Rules))}
	for i, r := range p.Rules {
		for j, f := range r.Filters {
			at := ref{int32(i), int32(j)}
			switch k := d.reach(f); k.kind {
			case reachAny:
				d.always[i] = append(d.always[i], int32(j))
			case reachPaths:
				d.paths[i] = append(d.paths[i], int32(j))
			default:
				if k.exact {
					d.exact[k.path] = append(d.exact[k.path], at)
				}
				if k.below {
					d.below[k.dir] = append(d.below[k.dir], at)
				}
			}
		}
	}
	return d
}

// A reach is the questions a filter may match (see Decider).
type reach struct {
	kind reachKind
	// exact: the path path; below: the paths strictly below dir.
	exact, below bool
	path, dir    string
}

type reachKind int

const (
	reachAny   reachKind = iota // any question
	reachPaths                  // any question with a path, none without
	reachKeyed                  // the paths exact and below name, none other
)

// reach is where filter f may match.
func (d *Decider) reach(f Filter) reach {
	switch f.Kind {
	case Literal, Subpath, Regex, PathRegex:
		s, ok := f.Str.Value(d.params)
		if !ok {
			return reach{kind: reachPaths} // Match fails on a path question
		}
		switch f.Kind {
		case Literal:
			return reach{kind: reachKeyed, exact: true, path: s}
		case Subpath:
			if s == "/" {
				return reach{kind: reachPaths}
			}
			return reach{kind: reachKeyed, exact: true, path: s, below: true, dir: strings.TrimSuffix(s, "/")}
		}
		if _, err := compileOnce(s); err != nil {
			return reach{kind: reachPaths}
		}
		prefix := literalPrefix(s)
		i := strings.LastIndexByte(prefix, '/')
		if i < 0 {
			return reach{kind: reachPaths}
		}
		return reach{kind: reachKeyed, below: true, dir: prefix[:i]}
	case RequireAll:
		if len(f.Args) > 0 {
			if k := d.reach(f.Args[0]); k.kind != reachAny {
				return k
			}
		}
	}
	return reach{kind: reachAny}
}

// literalPrefix is the text every match of regular expression re starts
// with, when re is anchored at the start of the text ("^..."); "" when it
// is not, or starts with no literal text. It stops before a character
// matched without regard to case and before U+FFFD, which also matches
// bytes that are not UTF-8.
func literalPrefix(re string) string {
	t, err := syntax.Parse(re, syntax.Perl) // as regexp.Compile reads it
	if err != nil || t.Op != syntax.OpConcat || len(t.Sub) == 0 || t.Sub[0].Op != syntax.OpBeginText {
		return ""
	}
	var b strings.Builder
	for _, s := range t.Sub[1:] {
		if s.Op != syntax.OpLiteral || s.Flags&syntax.FoldCase != 0 {
			break
		}
		for _, r := range s.Rune {
			if r == utf8.RuneError {
				return b.String()
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// found are the filters the index holds for path: those filed under it
// and under each directory above it, by rule from the last, each rule's
// in order.
func (d *Decider) found(path string) []ref {
	if path == "" {
		return nil
	}
	out := append([]ref(nil), d.exact[path]...)
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			out = append(out, d.below[path[:i]]...)
		}
	}
	slices.SortFunc(out, func(a, b ref) int {
		if a.Rule != b.Rule {
			return int(b.Rule - a.Rule)
		}
		return int(a.Filter - b.Filter)
	})
	return slices.Compact(out)
}

// match evaluates the filters of rule i that may match q, in order: the
// rule's filters of found (the index's for q's path, all of them of rule
// i), with those evaluated for every question. hits are the indices of
// those that match.
func (d *Decider) match(i int, q Question, found []ref) (hits []int, err error) {
	cand := make([]int32, 0, len(d.always[i])+len(d.paths[i])+len(found))
	cand = append(cand, d.always[i]...)
	if q.Path != "" {
		cand = append(cand, d.paths[i]...)
	}
	for _, x := range found {
		cand = append(cand, x.Filter)
	}
	slices.Sort(cand)
	r := d.p.Rules[i]
	for _, j := range cand {
		ok, err := Match(r.Filters[j], q, d.params)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %v", i, err)
		}
		if ok {
			hits = append(hits, int(j))
		}
	}
	return hits, nil
}

// Decide answers q with Seatbelt's semantics
// (docs/reference.md#macos-profile-layout, docs/reference.md#macos-filters):
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
func (d *Decider) Decide(q Question) (Verdict, error) {
	found := d.found(q.Path)
	// The last rule that matches decides: the rules are read from the
	// end, and the first that matches is the answer.
	for i := len(d.p.Rules) - 1; i >= 0; i-- {
		n := 0
		for n < len(found) && int(found[n].Rule) == i {
			n++
		}
		mine := found[:n]
		found = found[n:]
		r := d.p.Rules[i]
		if !coversOp(r.Ops, q.Op) {
			continue
		}
		if len(r.Filters) == 0 {
			return Verdict{Allow: r.Action == Allow, Rule: i}, nil
		}
		hits, err := d.match(i, q, mine)
		if err != nil {
			return Verdict{Rule: -1}, err
		}
		if len(hits) > 0 {
			return Verdict{Allow: r.Action == Allow, Rule: i, Filters: hits}, nil
		}
	}
	return Verdict{Rule: -1}, nil
}

// Matching are the indices, in order, of the filters of rule i that match
// q's object, whatever the operation.
func (d *Decider) Matching(i int, q Question) ([]int, error) {
	var mine []ref
	for _, x := range d.found(q.Path) {
		if int(x.Rule) == i {
			mine = append(mine, x)
		}
	}
	return d.match(i, q, mine)
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
	case Literal, Subpath:
		if q.Path == "" {
			return false, nil
		}
		// The path against the value s, read without building it.
		prefix, n, last, ok := f.Str.prefixOf(q.Path, params)
		switch {
		case !ok:
			return false, fmt.Errorf("%s: a parameter is not defined", f)
		case f.Kind == Literal:
			return prefix && len(q.Path) == n, nil // q.Path == s
		case n == 1 && last == '/':
			return true, nil // s == "/"
		}
		// q.Path == s, or q.Path starts with s without one trailing "/",
		// then "/".
		return prefix && (len(q.Path) == n || last == '/' || q.Path[n] == '/'), nil
	case Regex, PathRegex:
		if q.Path == "" {
			return false, nil
		}
		s, ok := f.Str.Value(params)
		if !ok {
			return false, fmt.Errorf("%s: a parameter is not defined", f)
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
