package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
)

// unknownKeys reports every key the grammar does not define, with a
// suggestion, and every required key that is missing. CUE reports "field not
// allowed" and "field is required" only when no other error exists, so this
// pass walks the document against the grammar on its own.
func (l *loader) unknownKeys(n *node, s cue.Value, path Path) {
	switch n.Kind {
	case kindObject:
		info := l.g.structAt(s, path)
		if !info.ok {
			return // a type error, reported by the grammar
		}
		st := info.val
		for _, f := range n.Fields {
			sel := cue.Str(f.Key)
			if !st.Allows(sel) {
				msg := fmt.Sprintf("unknown key %q", f.Key)
				if s := suggest(f.Key, info.names); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else if len(info.names) > 0 {
					msg += ": expected one of " + strings.Join(quoteAll(info.names), ", ")
				}
				l.addf(f.KeyOff, path.child(f.Key), "%s", msg)
				l.unknown[f.Value] = true
				continue
			}
			l.unknownKeys(f.Value, lookupField(st, f.Key), path.child(f.Key))
		}
		for _, name := range info.required {
			if n.get(name) == nil {
				l.missing = true
				l.addf(n.Off, path.child(name), "required key is missing: add %q: %s", name, emptyValue(lookupField(st, name)))
			}
		}
	case kindArray:
		for i, e := range n.Elems {
			if e.Kind == kindObject || e.Kind == kindArray { // scalars have no keys
				l.unknownKeys(e, schemaAt(s, Path{i}), path.child(i))
			}
		}
	}
}

// lookupField returns the grammar of key in struct st, whether the key is
// required, optional or matched by a pattern such as [string]: T.
func lookupField(st cue.Value, key string) cue.Value {
	for _, sel := range []cue.Selector{cue.Str(key), cue.Str(key).Required(), cue.Str(key).Optional(), cue.AnyString} {
		if v := st.LookupPath(cue.MakePath(sel)); v.Exists() {
			return v
		}
	}
	return cue.Value{}
}

// schemaAt returns the grammar of the value at path p.
func schemaAt(s cue.Value, p Path) cue.Value {
	for _, sel := range p {
		switch sel := sel.(type) {
		case int:
			v := s.LookupPath(cue.MakePath(cue.Index(sel)))
			if !v.Exists() {
				v = s.LookupPath(cue.MakePath(cue.AnyIndex))
			}
			s = v
		case string:
			st, ok := structBranch(s)
			if !ok {
				return cue.Value{}
			}
			s = lookupField(st, sel)
		}
	}
	return s
}

// structBranch returns s itself if it is a struct, or its struct
// alternative if s is a disjunction such as "path or {path, literal}".
func structBranch(s cue.Value) (cue.Value, bool) {
	if !s.Exists() || s.IncompleteKind()&cue.StructKind == 0 {
		return s, false
	}
	if s.IncompleteKind() == cue.StructKind {
		return s, true
	}
	// Values of different contexts may be unified: a one-off context
	// for the empty struct.
	u := s.Unify(cuecontext.New().CompileString("{}"))
	if u.Err() != nil {
		return s, false
	}
	return u, true
}

// structInfo is what unknownKeys needs to know of one struct of the
// grammar.
type structInfo struct {
	val      cue.Value
	ok       bool
	names    []string // every key, sorted
	required []string // the required keys
}

// structAt returns the struct branch of s, which is the grammar at path,
// computing it once per grammar and path (indices do not matter).
func (g *grammar) structAt(s cue.Value, path Path) *structInfo {
	var b strings.Builder
	for _, sel := range path {
		if k, ok := sel.(string); ok {
			b.WriteString(strconv.Quote(k))
		} else {
			b.WriteString("[]")
		}
	}
	key := b.String()
	if info, ok := g.structs[key]; ok {
		return info
	}
	info := &structInfo{}
	info.val, info.ok = structBranch(s)
	if info.ok {
		info.names, info.required = fieldNames(info.val)
	}
	g.structs[key] = info
	return info
}

// fieldNames lists the keys a struct in the grammar defines, sorted, and
// those it requires.
func fieldNames(st cue.Value) (names, required []string) {
	it, err := st.Fields(cue.Optional(true))
	if err != nil {
		return nil, nil
	}
	for it.Next() {
		name := it.Selector().Unquoted()
		names = append(names, name)
		if it.Selector().ConstraintType() == cue.RequiredConstraint {
			required = append(required, name)
		}
	}
	sort.Strings(names)
	return names, required
}

func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// suggest returns the name closest to key, if it is close enough to be a
// likely typo: a case-insensitive match, or an edit distance of at most a
// third of the name's length.
func suggest(key string, names []string) string {
	best, bestDist := "", 1<<30
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	if bestDist <= max(1, len(best)/3) {
		return best
	}
	return ""
}

// editDistance is the Damerau-Levenshtein (optimal string alignment)
// distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// A cueFinding is one error of the grammar, at a path in the document.
type cueFinding struct {
	path Path
	msg  string
}

// cueFindings lists the errors of one evaluation of the grammar, the
// evaluation that saw the chunk pass of every long array (see chunkSize).
func (l *loader) cueFindings(err error, pass int) []cueFinding {
	var found []cueFinding
	for _, e := range cueerrors.Errors(err) {
		path, ok := l.jsonPath(e.Path(), pass)
		if !ok {
			continue
		}
		format, args := e.Msg()
		found = append(found, cueFinding{path, fmt.Sprintf(format, args...)})
	}
	return found
}

// cueErrors turns the grammar's errors into diagnostics: one per JSON path,
// positioned at the offending value, with CUE's wording replaced where a
// user would not understand it. err is the first evaluation's error, for
// the fallback message.
func (l *loader) cueErrors(findings []cueFinding, err error, schema cue.Value) {
	if err == nil {
		return
	}
	type found struct {
		custom, typ, other string
	}
	byPath := map[string]*found{}
	var order []Path
	// below holds every path that has an error strictly beneath it.
	below := map[string]bool{}
	for _, fd := range findings {
		path, msg := fd.path, fd.msg
		key := path.String()
		f := byPath[key]
		if f == nil {
			f = &found{}
			byPath[key] = f
			order = append(order, path)
			for i := range len(path) {
				below[path[:i].String()] = true
			}
		}
		switch {
		case strings.Contains(msg, "field not allowed"):
			// Reported by unknownKeys, with a suggestion.
		case strings.Contains(msg, "field is required but not present"):
			// Reported by unknownKeys.
		case strings.Contains(msg, "errors in empty disjunction"):
		case strings.Contains(msg, "mismatched types"):
			f.typ = msg
		case isCUEWording(msg):
			if f.other == "" {
				f.other = msg
			}
		default: // a message of the grammar's own, from error("...")
			if f.custom == "" {
				f.custom = msg
			}
		}
	}
	before := len(l.diags)
	for _, path := range order {
		f := byPath[path.String()]
		n := path.lookup(l.root)
		if n != nil && (n.Kind == kindObject || n.Kind == kindArray) && below[path.String()] {
			// The errors below say what is wrong with this object or
			// array; what is reported here is only its mismatch against
			// the other alternatives of a disjunction, such as the string
			// form of a path entry.
			continue
		}
		switch {
		case f.custom != "" && n != nil:
			l.addf(n.Off, path, "%s%s", f.custom, got(n))
		case f.typ != "" && n != nil:
			l.addf(n.Off, path, "must be %s, not %s", kindPhrase(schemaAt(schema, path)), describe(n))
		case f.custom != "":
			l.addf(l.nearest(path), path, "%s", f.custom)
		case f.other != "":
			l.addf(l.nearest(path), path, "%s", f.other)
		}
	}
	if len(l.diags) == before && len(l.unknown) == 0 && !l.missing {
		// The grammar rejected the file, and nothing above explains why:
		// never accept it; show CUE's own words.
		l.addf(0, Path{}, "the grammar rejects this file: %s", strings.ReplaceAll(cueerrors.Details(err, nil), "\n", "; "))
	}
}

// nearest returns the offset of the value at path, or of its nearest
// ancestor present in the document.
func (l *loader) nearest(path Path) int {
	for i := len(path); i >= 0; i-- {
		if n := path[:i].lookup(l.root); n != nil {
			return n.Off
		}
	}
	return 0
}

// isCUEWording reports a message worded by CUE itself rather than by an
// error("...") of the grammar.
func isCUEWording(msg string) bool {
	for _, w := range []string{"conflicting values", "out of bound", "invalid value", "incomplete value", "non-concrete", "cannot", "undefined field", "invalid operand"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// got is the " (got X)" suffix naming a scalar value in a message.
func got(n *node) string {
	if n.Kind == kindArray || n.Kind == kindObject {
		return ""
	}
	return " (got " + describe(n) + ")"
}

// jsonPath converts a CUE error path (which starts with "#Settings") to a
// path in the document, using the document to tell indices from keys. An
// index into a long array is one of the chunk the given pass showed CUE.
func (l *loader) jsonPath(sels []string, pass int) (Path, bool) {
	if len(sels) == 0 || !strings.HasPrefix(sels[0], "#") {
		return nil, false
	}
	path := Path{}
	n := l.root
	for _, s := range sels[1:] {
		if strings.HasPrefix(s, "\"") {
			if u, err := strconv.Unquote(s); err == nil {
				s = u
			}
		}
		if n != nil && n.Kind == kindArray {
			i, err := strconv.Atoi(s)
			if err != nil {
				return nil, false
			}
			i = l.index(n, i+chunkStart(l.shown(n), pass))
			path = append(path, i)
			n = Path{i}.lookup(n)
			continue
		}
		path = append(path, s)
		if n != nil {
			n = Path{s}.lookup(n)
		}
	}
	return path, true
}

// kindPhrase names what the grammar expects at s: "a boolean", "a list", …
func kindPhrase(s cue.Value) string {
	var parts []string
	k := s.IncompleteKind()
	for _, c := range []struct {
		k    cue.Kind
		name string
	}{
		{cue.BoolKind, "a boolean (true or false)"},
		{cue.IntKind, "a whole number"},
		{cue.FloatKind, "a number"},
		{cue.StringKind, "a string"},
		{cue.ListKind, "an array"},
		{cue.StructKind, "an object"},
	} {
		if k&c.k != 0 && !(c.k == cue.FloatKind && k&cue.IntKind != 0) {
			parts = append(parts, c.name)
		}
	}
	if len(parts) == 0 {
		return "a different type"
	}
	return strings.Join(parts, " or ")
}

// emptyValue is a placeholder to suggest for a missing key of schema s.
// An object holds its own required keys, and theirs, so that one round
// of fixes makes the file whole: {"denyRead": [], "allowWrite": [], …}.
func emptyValue(s cue.Value) string { return placeholder(s, 0) }

// maxPlaceholderDepth bounds the objects placeholder writes inside each
// other; deeper ones are {}.
const maxPlaceholderDepth = 4

func placeholder(s cue.Value, depth int) string {
	switch s.IncompleteKind() {
	case cue.ListKind:
		return "[]"
	case cue.StructKind:
		_, required := fieldNames(s)
		if len(required) == 0 || depth >= maxPlaceholderDepth {
			return "{}"
		}
		parts := make([]string, len(required))
		for i, name := range required {
			parts[i] = strconv.Quote(name) + ": " + placeholder(lookupField(s, name), depth+1)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case cue.StringKind:
		return `"..."`
	}
	return "..."
}
