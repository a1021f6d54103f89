package seatbelt

import (
	"bytes"
	"strings"

	"srt.dev/compiler/policy"
)

// A Program is a Seatbelt profile as typed values: its rules in the order
// the profile writes them. Emit renders it; Decide evaluates it with
// Seatbelt's semantics. Both read the same rules, so what review/query
// answers is what the .sb text says.
type Program struct {
	Rules []Rule
	// Trailing are comment lines after the last rule.
	Trailing []string
	// privates and carves are the parameters the profile asks the runtime
	// for (see Defines).
	privates []string
	carves   []carve
}

// An Action is what a rule does with the operations it matches.
type Action int

// The actions.
const (
	Deny Action = iota
	Allow
)

func (a Action) String() string {
	if a == Allow {
		return "allow"
	}
	return "deny"
}

// A Step is the part of the profile a rule belongs to
// (docs/reference.md#macos-profile-layout and the steps of
// docs/reference.md#macos-reads): the built-in rules, the network, and
// each step of the file sections.
type Step int

// The steps, in the order of the profile.
const (
	StepBase           Step = iota // the default deny and the fixed base allowances, the optional blocks
	StepNetwork                    // the network section
	StepNoFiles                    // filesystem.disabled: reads and writes not restricted
	StepRead                       // everything readable
	StepReadDeny                   // the read denies
	StepReadAllow                  // the read allows inside them
	StepReadLate                   // the denies repeated after the allows
	StepReadRoot                   // "/" itself stays readable
	StepReadMetadata               // directories' metadata readable
	StepReadMoveBlock              // read-denied paths and their directories kept in place
	StepWriteRootMove              // unlinking and creating re-allowed in the write roots
	StepWriteRoot                  // the write roots
	StepWriteDeny                  // the write denies, the mandatory ones included
	StepGitHost                    // git's configuration in the home directory
	StepWriteMoveBlock             // write-denied paths and their directories kept in place
	StepTrailing                   // read-denied paths inside write roots cannot be unlinked
	StepPty                        // allowPty
)

// A Form is how a rule is written.
type Form int

// The forms.
const (
	// FormLine is one line: "(allow OPS FILTER...)".
	FormLine Form = iota
	// FormBlock is a header line with the operations, then one filter per
	// line indented by two spaces, the last closing the rule.
	FormBlock
)

// A Rule is one (allow|deny OPS FILTER...) form. Without filters it
// matches every object of its operations; with filters, any one of them.
type Rule struct {
	Action  Action
	Ops     []string
	Filters []Filter
	Step    Step
	Form    Form
	// Tag adds the violation tag, (with message (param "LOG_TAG")), after
	// the filters.
	Tag bool
	// Comments are comment lines written before the rule, without "; ".
	Comments []string
	// Dropped are the spellings of the rule's allows that the profile
	// leaves out because the reference never grants them on macOS (see
	// hostGate): not rendered, never matched; review/query names them when
	// it explains a deny.
	Dropped []Filter
}

// A FilterKind is the kind of a filter.
type FilterKind int

// The filter kinds.
const (
	Literal          FilterKind = iota // (literal S): the path S only
	Subpath                            // (subpath S): S and everything below it
	Regex                              // (regex S): paths S matches
	PathRegex                          // (path-regex S), inside a unix-socket filter
	RequireAll                         // (require-all F...): every one of Args
	RequireNot                         // (require-not F): not Args[0]
	LocalUnix                          // (local unix-socket F): a socket bound at a path Args[0] matches
	RemoteUnix                         // (remote unix-socket F): a socket connected to at such a path
	LocalIP                            // (local ip S): a local "host:port"
	RemoteIP                           // (remote ip S): a remote "host:port"
	GlobalName                         // (global-name S): the Mach service S
	GlobalNamePrefix                   // (global-name-prefix S): a Mach service starting with S
	VnodeType                          // (vnode-type Text): a file of that type (DIRECTORY, REGULAR-FILE, ...)
	Other                              // Text as written: a filter on what no file or socket question asks about
)

var kindNames = map[FilterKind]string{
	Literal: "literal", Subpath: "subpath", Regex: "regex", PathRegex: "path-regex",
	RequireAll: "require-all", RequireNot: "require-not",
	GlobalName: "global-name", GlobalNamePrefix: "global-name-prefix",
}

// A Filter is one filter of a rule.
type Filter struct {
	Kind FilterKind
	// Str is the string of a path or address filter.
	Str Str
	// Args are the filters a combination or a socket filter holds.
	Args []Filter
	// Text is an Other filter as written.
	Text string
	// Origin is the settings entry or built-in rule that made the filter
	// (policy.Default for a built-in one, policy.Mandatory for the
	// mandatory denies); a pin carries the origin of the entry it keeps
	// in place.
	Origin policy.Origin
	// Pin marks a directory kept in place, not itself protected.
	Pin bool
	// Gate, on the /private or folded spelling of an allow, is the
	// symbolic path whose existence when srt starts decides whether it
	// applies (see Probes).
	Gate string
	// Members are the literal entries a group regex stands for
	// (docs/reference.md#macos-reads, grouping), not rendered.
	Members []Filter
	// text is the filter as the profile writes it, for a filter on a
	// string the emitter made (see withText); "" otherwise.
	text string
}

// A Str is a string expression: its parts, concatenated.
type Str []Part

// A Part is a piece of text or a sandbox-exec parameter.
type Part struct {
	Text  string
	Param string // (param "Param") when set
	// Raw writes Text as a raw regex literal #"..." (no escapes).
	Raw bool
}

// text is a Str of one piece of text.
func text(s string) Str { return Str{{Text: s}} }

// param is a Str of one parameter.
func param(name string) Part { return Part{Param: name} }

func (s Str) render() string {
	if len(s) == 1 {
		return s[0].render()
	}
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.render()
	}
	return "(string-append " + strings.Join(parts, " ") + ")"
}

func (p Part) render() string {
	switch {
	case p.Param != "":
		return `(param "` + p.Param + `")`
	case p.Raw:
		return `#"` + p.Text + `"`
	}
	return escape(p.Text)
}

// Value is the string s stands for with the parameters' values; ok is
// false when one is not defined (sandbox-exec would refuse the profile).
func (s Str) Value(params map[string]string) (v string, ok bool) {
	if len(s) == 1 && s[0].Param == "" {
		return s[0].Text, true
	}
	var b strings.Builder
	for _, p := range s {
		if p.Param == "" {
			b.WriteString(p.Text)
			continue
		}
		x, ok := params[p.Param]
		if !ok {
			return "", false
		}
		b.WriteString(x)
	}
	return b.String(), true
}

// prefixOf compares path with the string s stands for, v, without
// building it: prefix is whether path starts with v, n is len(v) and last
// its last byte (0 when v is ""); ok is false when a parameter is not
// defined.
func (s Str) prefixOf(path string, params map[string]string) (prefix bool, n int, last byte, ok bool) {
	prefix = true
	for _, p := range s {
		v := p.Text
		if p.Param != "" {
			if v, ok = params[p.Param]; !ok {
				return false, 0, 0, false
			}
		}
		if v == "" {
			continue
		}
		n += len(v)
		last = v[len(v)-1]
		if prefix {
			prefix = strings.HasPrefix(path, v)
			path = path[min(len(v), len(path)):]
		}
	}
	return prefix, n, last, true
}

// String is the filter as the profile writes it.
func (f Filter) String() string {
	if f.text != "" {
		return f.text
	}
	return f.render()
}

// withText is f with its text rendered and kept: the emitter compares
// filters by their text, and writes it, so each filter on a string it
// makes is rendered once. Kind, Str, Args and Text must not change after.
// The emitter keeps no text on a combination (require-all, require-not, a
// unix socket filter): its text is its filters', which the profile writes
// from them (see writeTo), and keeping it too would hold a second copy of
// most of a large profile.
func (f Filter) withText() Filter {
	if f.text == "" {
		f.text = f.render()
	}
	return f
}

// writeTo writes f as the profile does, a combination from its filters.
func (f Filter) writeTo(b textWriter) {
	if f.text != "" {
		b.WriteString(f.text)
		return
	}
	switch f.Kind {
	case RequireAll, RequireNot:
		b.WriteByte('(')
		b.WriteString(kindNames[f.Kind])
		for _, a := range f.Args {
			b.WriteByte(' ')
			a.writeTo(b)
		}
		b.WriteByte(')')
	case LocalUnix, RemoteUnix:
		if f.Kind == LocalUnix {
			b.WriteString("(local unix-socket ")
		} else {
			b.WriteString("(remote unix-socket ")
		}
		f.Args[0].writeTo(b)
		b.WriteByte(')')
	default:
		b.WriteString(f.render())
	}
}

// render is f as the profile writes it.
func (f Filter) render() string {
	switch f.Kind {
	case Literal, Subpath, Regex, PathRegex, GlobalName, GlobalNamePrefix:
		return "(" + kindNames[f.Kind] + " " + f.Str.render() + ")"
	case RequireAll, RequireNot:
		parts := []string{kindNames[f.Kind]}
		for _, a := range f.Args {
			parts = append(parts, a.String())
		}
		return "(" + strings.Join(parts, " ") + ")"
	case LocalUnix:
		return "(local unix-socket " + f.Args[0].String() + ")"
	case RemoteUnix:
		return "(remote unix-socket " + f.Args[0].String() + ")"
	case LocalIP:
		return "(local ip " + f.Str.render() + ")"
	case RemoteIP:
		return "(remote ip " + f.Str.render() + ")"
	case VnodeType:
		return "(vnode-type " + f.Text + ")"
	}
	return f.Text
}

// tagText is the message every computed rule and the default deny carry.
var tagText = `(with message (param "` + ParamLogTag + `"))`

// A textWriter is where Render writes: the profile's bytes, or a count
// of them.
type textWriter interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

// counter counts what is written to it.
type counter int

func (c *counter) WriteString(s string) (int, error) { *c += counter(len(s)); return len(s), nil }
func (c *counter) WriteByte(byte) error              { *c++; return nil }

// write writes the rule as the profile does, its comments first, each
// line ending in a newline.
func (r Rule) write(b textWriter) {
	for _, c := range r.Comments {
		b.WriteString("; ")
		b.WriteString(c)
		b.WriteByte('\n')
	}
	b.WriteByte('(')
	b.WriteString(r.Action.String())
	b.WriteByte(' ')
	for i, o := range r.Ops {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o)
	}
	if r.Form == FormLine {
		for _, f := range r.Filters {
			b.WriteByte(' ')
			f.writeTo(b)
		}
		if r.Tag {
			b.WriteByte(' ')
			b.WriteString(tagText)
		}
		b.WriteString(")\n")
		return
	}
	b.WriteByte('\n')
	for i, f := range r.Filters {
		b.WriteString("  ")
		f.writeTo(b)
		if i == len(r.Filters)-1 && !r.Tag {
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	}
	if r.Tag {
		b.WriteString("  ")
		b.WriteString(tagText)
		b.WriteString(")\n")
	}
}

// Render is the profile's text: (version 1), then each rule; its size
// is counted first, so that it is written into one buffer of that size.
func (p *Program) Render() []byte {
	var n counter
	p.write(&n)
	var b bytes.Buffer
	b.Grow(int(n))
	p.write(&b)
	return b.Bytes()
}

// write writes the profile's text to b.
func (p *Program) write(b textWriter) {
	b.WriteString("(version 1)\n")
	for _, r := range p.Rules {
		r.write(b)
	}
	for _, c := range p.Trailing {
		b.WriteString("; ")
		b.WriteString(c)
		b.WriteByte('\n')
	}
}

// escape writes s as an SBPL string literal, JSON's escaping of `"` and
// `\` (see quote, which the emitter checks every string with first).
func escape(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
