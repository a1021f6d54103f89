package seatbelt

import (
	"fmt"
	"strings"
)

// This file is a small reader for the S-expressions of a Seatbelt profile,
// written independently of the emitter, and a checker of what a profile
// may contain: balanced parentheses, closed strings with only \" and \\
// escapes, no control characters, and only the operations and filters
// below. The tests run it over every golden profile and over profiles of
// generated policies with hostile paths.

// A node is an atom (symbol, number, string) or a list.
type node struct {
	list   []node
	isList bool
	atom   string // symbols and numbers as written
	str    *string
	raw    bool // a string written #"..."
	pos    int
	end    int // offset after the node
}

// readProfile parses every top-level form of src.
func readProfile(src string) ([]node, error) {
	r := &reader{src: src}
	var out []node
	for {
		r.skip()
		if r.i >= len(r.src) {
			return out, nil
		}
		n, err := r.read()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

type reader struct {
	src string
	i   int
}

// skip passes white space and comments (";" to the end of the line).
func (r *reader) skip() {
	for r.i < len(r.src) {
		switch c := r.src[r.i]; {
		case c == ' ' || c == '\n' || c == '\t':
			r.i++
		case c == ';':
			for r.i < len(r.src) && r.src[r.i] != '\n' {
				r.i++
			}
		default:
			return
		}
	}
}

func (r *reader) read() (node, error) {
	start := r.i
	switch c := r.src[r.i]; {
	case c == '(':
		r.i++
		n := node{isList: true, pos: start}
		for {
			r.skip()
			if r.i >= len(r.src) {
				return n, fmt.Errorf("offset %d: list not closed", start)
			}
			if r.src[r.i] == ')' {
				r.i++
				n.end = r.i
				return n, nil
			}
			child, err := r.read()
			if err != nil {
				return n, err
			}
			n.list = append(n.list, child)
		}
	case c == ')':
		return node{}, fmt.Errorf("offset %d: unbalanced ')'", start)
	case c == '"':
		return r.string(start)
	case c == '#' && strings.HasPrefix(r.src[r.i:], `#"`):
		// A raw regex literal: no escapes, ends at the next quote.
		end := strings.IndexByte(r.src[r.i+2:], '"')
		if end < 0 {
			return node{}, fmt.Errorf("offset %d: raw string not closed", start)
		}
		s := r.src[r.i+2 : r.i+2+end]
		r.i += end + 3
		return node{str: &s, raw: true, pos: start, end: r.i}, nil
	default:
		for r.i < len(r.src) && !strings.ContainsRune(" \n\t()\";", rune(r.src[r.i])) {
			r.i++
		}
		return node{atom: r.src[start:r.i], pos: start, end: r.i}, nil
	}
}

func (r *reader) string(start int) (node, error) {
	var b strings.Builder
	for r.i++; r.i < len(r.src); r.i++ {
		switch c := r.src[r.i]; {
		case c == '"':
			r.i++
			s := b.String()
			return node{str: &s, pos: start, end: r.i}, nil
		case c == '\\':
			if r.i+1 >= len(r.src) || (r.src[r.i+1] != '"' && r.src[r.i+1] != '\\') {
				return node{}, fmt.Errorf("offset %d: escape other than \\\" or \\\\ in a string", r.i)
			}
			r.i++
			b.WriteByte(r.src[r.i])
		case c < 0x20:
			return node{}, fmt.Errorf("offset %d: control character %#x in a string", r.i, c)
		default:
			b.WriteByte(c)
		}
	}
	return node{}, fmt.Errorf("offset %d: string not closed", start)
}

// The vocabulary a profile may use.
var (
	operations = set("default", "process-exec", "process-fork", "process-info*", "signal", "mach-priv-task-port",
		"user-preference-read", "mach-lookup", "ipc-posix-shm", "ipc-posix-sem", "iokit-open", "iokit-get-properties",
		"system-socket", "sysctl-read", "sysctl-write", "distributed-notification-post", "file-ioctl",
		"file-read-data", "file-write-data", "appleevent-send", "lsopen", "network-bind", "network-inbound",
		"network-outbound", "file-read*", "file-write*", "file-read-metadata", "file-write-unlink",
		"file-write-create", "pseudo-tty")
	// Filters and what their arguments are: "s" a string expression, "f"
	// a filter, "a" a symbol or number, "n" a network address filter.
	filters = map[string]string{
		"subpath": "s", "literal": "s", "regex": "s", "path-regex": "s",
		"global-name": "s", "global-name-prefix": "s", "sysctl-name": "s", "sysctl-name-prefix": "s",
		"iokit-registry-entry-class": "s", "iokit-user-client-class": "s",
		"require-all": "f+", "require-any": "f+", "require-not": "f",
		"target": "a", "socket-domain": "a", "socket-protocol": "a", "vnode-type": "a",
		"local": "n", "remote": "n",
	}
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkProfile parses src and checks every form; it returns the number of
// rules.
func checkProfile(src string) (int, error) {
	forms, err := readProfile(src)
	if err != nil {
		return 0, err
	}
	if len(forms) < 2 || !isForm(forms[0], "version") || len(forms[0].list) != 2 || forms[0].list[1].atom != "1" {
		return 0, fmt.Errorf("the profile does not start with (version 1)")
	}
	if !isForm(forms[1], "deny") || len(forms[1].list) < 2 || forms[1].list[1].atom != "default" {
		return 0, fmt.Errorf("the second form is not (deny default ...)")
	}
	for _, f := range forms[1:] {
		if err := checkRule(f); err != nil {
			return 0, err
		}
	}
	return len(forms) - 1, nil
}

func isForm(n node, head string) bool {
	return n.isList && len(n.list) > 0 && n.list[0].atom == head
}

func checkRule(n node) error {
	if !isForm(n, "allow") && !isForm(n, "deny") {
		return fmt.Errorf("offset %d: a rule must be (allow ...) or (deny ...)", n.pos)
	}
	i := 1
	for ; i < len(n.list) && !n.list[i].isList; i++ {
		if !operations[n.list[i].atom] {
			return fmt.Errorf("offset %d: unknown operation %q", n.list[i].pos, n.list[i].atom)
		}
	}
	if i == 1 {
		return fmt.Errorf("offset %d: a rule without an operation", n.pos)
	}
	for ; i < len(n.list); i++ {
		c := n.list[i]
		if isForm(c, "with") {
			if i != len(n.list)-1 || len(c.list) != 3 || c.list[1].atom != "message" {
				return fmt.Errorf("offset %d: (with message X) must end a rule", c.pos)
			}
			if err := checkString(c.list[2]); err != nil {
				return err
			}
			continue
		}
		if err := checkFilter(c); err != nil {
			return err
		}
	}
	return nil
}

func checkFilter(n node) error {
	if !n.isList || len(n.list) == 0 {
		return fmt.Errorf("offset %d: a filter must be a list", n.pos)
	}
	kind, ok := filters[n.list[0].atom]
	if !ok {
		return fmt.Errorf("offset %d: unknown filter %q", n.pos, n.list[0].atom)
	}
	args := n.list[1:]
	switch kind {
	case "s":
		if len(args) != 1 {
			return fmt.Errorf("offset %d: %s takes one string", n.pos, n.list[0].atom)
		}
		return checkString(args[0])
	case "f", "f+":
		if len(args) == 0 || kind == "f" && len(args) != 1 {
			return fmt.Errorf("offset %d: %s: wrong number of filters", n.pos, n.list[0].atom)
		}
		for _, a := range args {
			if err := checkFilter(a); err != nil {
				return err
			}
		}
	case "a":
		if len(args) != 1 || args[0].isList || args[0].str != nil {
			return fmt.Errorf("offset %d: %s takes one symbol", n.pos, n.list[0].atom)
		}
	case "n":
		if len(args) != 2 || args[0].isList || (args[0].atom != "ip" && args[0].atom != "unix-socket") {
			return fmt.Errorf("offset %d: %s takes ip or unix-socket and an address", n.pos, n.list[0].atom)
		}
		if args[0].atom == "unix-socket" {
			return checkFilter(args[1])
		}
		return checkString(args[1])
	}
	return nil
}

// checkString accepts a string literal, (param "NAME") with a known name,
// and string-append of those.
func checkString(n node) error {
	switch {
	case n.str != nil:
		if len(*n.str) > MaxString {
			return fmt.Errorf("offset %d: string of %d bytes", n.pos, len(*n.str))
		}
		return nil
	case isForm(n, "param"):
		if len(n.list) != 2 || n.list[1].str == nil || !knownParams[*n.list[1].str] && !carveParam(*n.list[1].str) && !privateParam(*n.list[1].str) {
			return fmt.Errorf("offset %d: param of an unknown name", n.pos)
		}
		return nil
	case isForm(n, "string-append"):
		if len(n.list) < 3 {
			return fmt.Errorf("offset %d: string-append of fewer than two strings", n.pos)
		}
		for _, a := range n.list[1:] {
			if err := checkString(a); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("offset %d: not a string expression", n.pos)
}

var knownParams = set(ParamHome, ParamCwd, ParamHomeRegex, ParamCwdRegex, ParamHomeParentsRegex,
	ParamCwdParentsRegex, ParamHTTPPort, ParamSOCKSPort, ParamLogTag)

// carveParam reports whether name is a carve parameter, CARVE_n with n a
// number from 1 without leading zeros.
func carveParam(name string) bool { return numbered(name, ParamCarvePrefix) }

// privateParam reports whether name is a /private parameter, PRIVATE_n.
func privateParam(name string) bool { return numbered(name, ParamPrivatePrefix) }

// numbered reports whether name is prefix followed by a number from 1
// without leading zeros.
func numbered(name, prefix string) bool {
	n, ok := strings.CutPrefix(name, prefix)
	if !ok || n == "" || n[0] == '0' {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
