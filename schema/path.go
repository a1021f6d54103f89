package schema

import (
	"strconv"
	"strings"
)

// A Path names a value in a settings document: object keys (string) and
// array indices (int), from the root.
type Path []any

// identifier reports whether s is written as a JavaScript identifier
// (ASCII only): [A-Za-z_$][A-Za-z0-9_$]*.
func identifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

// String renders p the way a JavaScript expression would reach the value:
// network.allowedDomains[2], ignoreViolations["git push"]. The root is
// "(root)".
func (p Path) String() string {
	if len(p) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for i, s := range p {
		switch s := s.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if identifier(s) {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
			} else {
				b.WriteString("[" + strconv.Quote(s) + "]")
			}
		}
	}
	return b.String()
}

// child returns p extended by one selector, without sharing p's array.
func (p Path) child(sel any) Path {
	q := make(Path, len(p), len(p)+1)
	copy(q, p)
	return append(q, sel)
}

// lookup returns the node p names below n, or nil.
func (p Path) lookup(n *node) *node {
	for _, s := range p {
		if n == nil {
			return nil
		}
		switch s := s.(type) {
		case int:
			if n.Kind != kindArray || s < 0 || s >= len(n.Elems) {
				return nil
			}
			n = n.Elems[s]
		case string:
			if n.Kind != kindObject {
				return nil
			}
			n = n.get(s)
		}
	}
	return n
}
