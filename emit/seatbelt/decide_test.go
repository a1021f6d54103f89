package seatbelt

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// DecideLinear is Decide's linear reading: every filter of every rule,
// read from the last rule, the first that matches deciding. The Decider's
// index must give the same verdict, matching filters and error.
func DecideLinear(p *Program, q Question, params map[string]string) (Verdict, error) {
	for i := len(p.Rules) - 1; i >= 0; i-- {
		r := p.Rules[i]
		if !coversOp(r.Ops, q.Op) {
			continue
		}
		hits, err := MatchingLinear(p, i, q, params)
		if err != nil {
			return Verdict{Rule: -1}, err
		}
		if len(r.Filters) == 0 || len(hits) > 0 {
			return Verdict{Allow: r.Action == Allow, Rule: i, Filters: hits}, nil
		}
	}
	return Verdict{Rule: -1}, nil
}

// MatchingLinear is Decider.Matching's linear reading: every filter of
// rule i, in order.
func MatchingLinear(p *Program, i int, q Question, params map[string]string) ([]int, error) {
	var hits []int
	for j, f := range p.Rules[i].Filters {
		ok, err := Match(f, q, params)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %v", i, err)
		}
		if ok {
			hits = append(hits, j)
		}
	}
	return hits, nil
}

// CompareDecider asks d and the linear reading q, and with rules every
// rule's matching filters, and reports the first difference.
func CompareDecider(d *Decider, q Question, rules bool) error {
	got, gerr := d.Decide(q)
	want, werr := DecideLinear(d.p, q, d.params)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
		return fmt.Errorf("Decide(%+v) = %+v, %v (indexed), want %+v, %v (linear)", q, got, gerr, want, werr)
	}
	for i := range d.p.Rules {
		if !rules {
			break
		}
		got, gerr := d.Matching(i, q)
		want, werr := MatchingLinear(d.p, i, q, d.params)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			return fmt.Errorf("Matching(%d, %+v) = %v, %v (indexed), want %v, %v (linear)", i, q, got, gerr, want, werr)
		}
	}
	return nil
}

// TestLiteralPrefix pins the text a regex's matches start with, which
// the Decider files a regex filter under.
func TestLiteralPrefix(t *testing.T) {
	for _, c := range []struct{ re, want string }{
		{`^/Users/me/\.ssh(/.*)?$`, "/Users/me/.ssh"},
		{`^/Users/me/proj/(a|b|c)/(x|y)(/.*)?$`, "/Users/me/proj/"},
		{`^/\$\{HOME\}/(.*/)?\.env(/.*)?$`, "/${HOME}/"},
		{`^/(.*/)?[^/]*\.key(/.*)?$`, "/"},
		{`^/ab*`, "/a"},        // a quantifier takes the last letter
		{`^/a?b`, "/"},         // as does "?"
		{`^/a|^/b`, ""},        // alternatives: none (a shorter prefix is always right)
		{`^/ab|/b`, ""},        // the second alternative is not anchored
		{`/ab`, ""},            // nor is this
		{`(?i)^/ab`, ""},       // nor case-folded text
		{`^/a(?i)b`, "/a"},     // up to the folding
		{`^/a\x{FFFD}b`, "/a"}, // U+FFFD also matches bytes that are not UTF-8
		{`^/dev/ttys`, "/dev/ttys"},
		{`^`, ""},
		{`^(/a|/b)$`, ""},
		{`^/a(`, ""}, // does not compile
	} {
		if got := literalPrefix(c.re); got != c.want {
			t.Errorf("literalPrefix(%q) = %q, want %q", c.re, got, c.want)
		}
	}
}

// TestDeciderByHand compares the Decider with the linear reading on a
// hand-written profile whose filters reach the index's every case:
// literals and subpaths (with a trailing "/", "/" itself, ""), regexes
// with and without a literal prefix, alternatives, case folding, one that
// does not compile, require-all keyed by its first filter, require-not,
// vnode types, sockets, addresses and Mach names, and parameters that are
// not defined, which are errors only when the answer reaches them.
func TestDeciderByHand(t *testing.T) {
	profile := `(version 1)
(deny default (with message (param "LOG_TAG")))
(allow file-read*)
(deny file-read* (subpath (param "HOME")) (literal "/etc/x") (subpath "/a/") (regex #"^/(.*/)?\.env(/.*)?$"))
(allow file-read* (regex #"^/Users/me/\.ssh/(pub|known)") (regex #"(?i)^/users/ME/Docs") (regex #"pem$") (regex #"^/a|/b/c"))
(deny file-read* (require-all (subpath (string-append (param "HOME") "/p")) (require-not (subpath (string-append (param "CARVE_1") (param "HOME") "/p/ok")))))
(allow file-read-metadata (vnode-type DIRECTORY))
(deny file-read-xattr (require-not (subpath "/b")))
(allow file-read* (subpath "/b/open") (literal "/b"))
(allow file-write* (subpath (param "CWD")) (subpath "/private/tmp") (subpath "//w"))
(deny file-write* (regex #"^/private/tmp/[0-9]+/x$") (literal (param "UNDEFINED_1")))
(deny file-write-unlink (literal (param "CWD")) (require-all (literal "/z") (vnode-type REGULAR-FILE)))
(allow file-write-create (regex (string-append "^" (param "UNDEFINED_2") "/q")))
(deny file-write-setugid (regex #"^/bad(") (subpath "/"))
(allow file-ioctl (literal "/dev/null") (regex #"^/dev/ttys"))
(allow network-outbound (remote unix-socket (subpath "/private/var/run/x.sock")) (remote ip "localhost:4000"))
(allow network-outbound (remote unix-socket (path-regex #"^/private/var/run/[a-z]+\.sock$")))
(allow mach-lookup (global-name "com.a") (global-name-prefix "org.b."))
(deny mach-lookup (global-name "org.b.no"))
(allow pseudo-tty)
`
	prog, err := parseProgram(profile)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/", "", "x", "/a", "/a/", "/a/b", "/ab", "/b", "/b/", "/b/c", "/b/cd", "/b/open", "/b/open/x", "/c",
		"/etc/x", "/etc/x/y", "/etc/xy", "/x/.env", "/.env", "/.envrc", "/Users/me", "/Users/me/", "/Users/me/x",
		"/Users/me/.ssh/pub", "/Users/me/.ssh/publish", "/Users/me/.ssh/id", "/USERS/me/docs/a", "/Users/me/Docs/a",
		"/Users/me/p", "/Users/me/p/x", "/Users/me/p/ok", "/Users/me/p/ok/x", "/Users/me/pq", "/k.pem", "/Users/me/p/k.pem",
		"/x/b/c", "/w/x", "//w", "//w/x", "/private/tmp/12/x", "/private/tmp/x", "/q", "/z", "/bad", "/bad(",
		"/dev/null", "/dev/ttys001", "/private/var/run/x.sock", "/private/var/run/ab.sock", "/Users/me/\xff", "/\xef\xbf\xbd"}
	ops := []string{OpReadData, "file-read-metadata", "file-read-xattr", OpWriteData, OpUnlink, OpCreate, "file-write-setugid", "file-ioctl"}
	for _, params := range []map[string]string{
		{"HOME": "/Users/me", "CWD": "/Users/me/p", "CARVE_1": "", "LOG_TAG": "T", "UNDEFINED_1": "/u"},
		{"HOME": "/Users/me", "CWD": "/work", "CARVE_1": "/\x00", "LOG_TAG": "T", "UNDEFINED_2": "/private/tmp"},
		{"HOME": "/", "CWD": "/Users/me/p", "CARVE_1": ""}, // HOME "/": HOME/p is "//p"
		nil, // nothing defined: errors where a rule needs a parameter
	} {
		d := prog.Decider(params)
		var qs []Question
		for _, p := range paths {
			for _, op := range ops {
				qs = append(qs, Question{Op: op, Path: p}, Question{Op: op, Path: p, Dir: true})
			}
			qs = append(qs, Question{Op: OpSocketOut, Socket: p})
		}
		qs = append(qs, Question{Op: OpSocketOut, Addr: "127.0.0.1:4000"}, Question{Op: "mach-lookup", Name: "org.b.no"},
			Question{Op: "mach-lookup", Name: "org.b.yes"}, Question{Op: "pseudo-tty"}, Question{Op: "appleevent-send"})
		for _, q := range qs {
			if err := CompareDecider(d, q, true); err != nil {
				t.Errorf("params %v: %v", params, err)
			}
		}
	}
	// The index reaches what it must: the cases above decide by rules
	// found under a path, by regexes without a prefix, and by errors.
	d := prog.Decider(map[string]string{"HOME": "/Users/me", "CWD": "/Users/me/p", "CARVE_1": "", "UNDEFINED_1": "/u"})
	for _, c := range []struct {
		q     Question
		allow bool
		rule  int
		err   bool
	}{
		{Question{Op: OpReadData, Path: "/Users/me/.ssh/pub"}, true, 3, false},
		{Question{Op: OpReadData, Path: "/Users/me/.ssh/id"}, false, 2, false},
		{Question{Op: OpReadData, Path: "/Users/me/p/x"}, false, 4, false},
		{Question{Op: OpReadData, Path: "/Users/me/p/ok"}, false, 2, false},
		{Question{Op: OpReadData, Path: "/x/b/c"}, true, 3, false}, // "/b/c", not anchored: no prefix
		{Question{Op: OpReadData, Path: "/c"}, true, 1, false},
		{Question{Op: "file-read-xattr", Path: "/c"}, false, 6, false},
		{Question{Op: OpReadData, Path: "/b/open/x"}, true, 7, false},
		{Question{Op: OpWriteData, Path: "/private/tmp/12/x"}, false, 9, false},
		{Question{Op: OpCreate, Path: "/q"}, false, 0, true},                  // UNDEFINED_2
		{Question{Op: "file-write-setugid", Path: "/x"}, false, 0, true},      // the regex that does not compile
		{Question{Op: "file-write-setugid", Socket: "/bad"}, false, 0, false}, // no path: neither is read; (deny default)
		{Question{Op: OpSocketOut, Socket: "/private/var/run/ab.sock"}, true, 15, false},
		{Question{Op: "mach-lookup", Name: "org.b.no"}, false, 17, false},
	} {
		v, err := d.Decide(c.q)
		if (err != nil) != c.err || err == nil && (v.Allow != c.allow || v.Rule != c.rule) {
			t.Errorf("Decide(%+v) = %v (rule %d, %v), want %v (rule %d, error %v)", c.q, v.Allow, v.Rule, err, c.allow, c.rule, c.err)
		}
	}
}

// TestMatchPaths compares Match on literal and subpath filters, which
// reads a string expression against the path part by part, with the
// definition on the string built whole: literal is the path itself,
// subpath the path, "/", or a path starting with it (one trailing "/"
// removed) and "/". The expressions join texts and parameters whose
// values are "", "/", with and without trailing separators, or not
// defined.
func TestMatchPaths(t *testing.T) {
	params := map[string]string{"E": "", "R": "/", "A": "/a", "AS": "/a/", "B": "b", "BS": "b/", "OFF": "/\x00"}
	parts := []Part{{Text: ""}, {Text: "/"}, {Text: "/a"}, {Text: "/a/"}, {Text: "b"}, {Text: "//"},
		{Param: "E"}, {Param: "R"}, {Param: "A"}, {Param: "AS"}, {Param: "B"}, {Param: "BS"}, {Param: "OFF"}, {Param: "UNDEFINED"}}
	var strs []Str
	for _, a := range parts {
		strs = append(strs, Str{a})
		for _, b := range parts {
			strs = append(strs, Str{a, b})
			for _, c := range parts[:6] {
				strs = append(strs, Str{a, b, c})
			}
		}
	}
	paths := []string{"x", "/", "//", "/a", "/a/", "/a//", "/ab", "/a/b", "/a/b/", "/a/bb", "/a/b/c", "/ab/", "//a", "/a//b", "b", "b/", "b/c", "/\x00", "/\x00/a"}
	for _, s := range strs {
		v, defined := s.Value(params)
		for _, k := range []FilterKind{Literal, Subpath} {
			f := Filter{Kind: k, Str: s}
			for _, p := range paths {
				got, err := Match(f, Question{Op: OpReadData, Path: p}, params)
				want := false
				switch {
				case k == Literal:
					want = p == v
				default:
					want = p == v || v == "/" || strings.HasPrefix(p, strings.TrimSuffix(v, "/")+"/")
				}
				if (err == nil) != defined || defined && got != want {
					t.Errorf("Match(%s, %q) = %v, %v; want %v (defined %v)", f, p, got, err, want, defined)
				}
			}
		}
	}
}
