package schema

import (
	"fmt"
	"math"
	"srt.dev/schema/builtin"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

// The JSON types.
const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k kind) String() string { return kindNames[k] }

// A node is a parsed JSON value that remembers where it was written.
type node struct {
	Kind kind
	// Off is the byte offset of the value's first byte in the file.
	Off int
	// Str is the value of a string, or the text of a number as written.
	Str string
	// Num is the value of a number (a float64, as in JavaScript).
	Num  float64
	Bool bool
	// Elems are the elements of an array.
	Elems []*node
	// Fields are the members of an object, in file order. Keys are unique.
	Fields []field
}

// A field is one member of a JSON object.
type field struct {
	Key    string
	KeyOff int
	Value  *node
}

// get returns the value of the member named key, or nil.
func (n *node) get(key string) *node {
	for _, f := range n.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// integral reports whether n is a number whose value is a whole number, the
// way JavaScript's Number.isInteger decides it: 3, 3.0 and 1e1 are; 2.5 and
// 1e400 (Infinity) are not.
func (n *node) integral() bool {
	return n.Kind == kindNumber && !math.IsInf(n.Num, 0) && n.Num == math.Trunc(n.Num)
}

// MaxFileSize is the largest settings file Load accepts (see
// builtin.MaxFileSize).
const MaxFileSize = builtin.MaxFileSize

// maxDepth bounds nesting. The schema needs 5 levels; 64 leaves room for
// unknown keys to be reported rather than refused.
const maxDepth = 64

// A syntaxError is a problem that stops parsing, at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parseJSON parses data as one strict JSON document (RFC 8259, the grammar
// of ECMAScript's JSON.parse). Unlike JSON.parse it also refuses a byte order
// mark, invalid UTF-8, duplicate object keys and nesting deeper than
// maxDepth, each with its own message.
func parseJSON(data []byte) (*node, error) {
	p := &parser{data: data}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, &syntaxError{0, "the file starts with a UTF-8 byte order mark, which JSON does not allow: save it without a BOM"}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, &syntaxError{off, "the file is not valid UTF-8: save it as UTF-8"}
	}
	p.skipSpace()
	if p.off == len(data) {
		return nil, &syntaxError{0, "the file is empty: delete it, or write a settings object in it"}
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.off != len(data) {
		return nil, p.errorf("unexpected %s after the end of the JSON value: a settings file holds exactly one object", p.describe())
	}
	return n, nil
}

type parser struct {
	data []byte
	off  int
}

func (p *parser) errorf(format string, args ...any) error {
	return &syntaxError{p.off, fmt.Sprintf(format, args...)}
}

// describe names the byte at the current offset for an error message.
func (p *parser) describe() string {
	if p.off >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.off:])
	if r < 0x20 || r == 0x7f {
		return fmt.Sprintf("character %U", r)
	}
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("values are nested more than %d deep", maxDepth)
	}
	if p.off >= len(p.data) {
		return nil, p.errorf("unexpected end of file: expected a value")
	}
	switch c := p.data[p.off]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		off := p.off
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &node{Kind: kindString, Off: off, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", &node{Kind: kindBool, Bool: true})
	case c == 'f':
		return p.literal("false", &node{Kind: kindBool})
	case c == 'n':
		return p.literal("null", &node{Kind: kindNull})
	case c == '\'':
		return nil, p.errorf("strings must use double quotes")
	default:
		return nil, p.errorf("unexpected %s: expected a value", p.describe())
	}
}

func (p *parser) literal(word string, n *node) (*node, error) {
	if !strings.HasPrefix(string(p.data[p.off:min(len(p.data), p.off+len(word))]), word) {
		return nil, p.errorf("unexpected %s: expected a value (JSON has no NaN, Infinity, undefined or comments)", p.describe())
	}
	n.Off = p.off
	p.off += len(word)
	return n, nil
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{Kind: kindObject, Off: p.off}
	p.off++ // {
	seen := map[string]int{}
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == '}' {
		p.off++
		return n, nil
	}
	for {
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			if p.off < len(p.data) && p.data[p.off] == '}' {
				return nil, p.errorf("trailing comma before '}'")
			}
			return nil, p.errorf("unexpected %s: expected a key in double quotes", p.describe())
		}
		keyOff := p.off
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if first, dup := seen[key]; dup {
			line, col := lineCol(newlineOffsets(p.data[:first]), first)
			return nil, &syntaxError{keyOff, fmt.Sprintf("duplicate key %q (first at line %d, column %d): JSON.parse would silently keep only the last one; remove one of them", key, line, col)}
		}
		seen[key] = keyOff
		p.skipSpace()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			return nil, p.errorf("unexpected %s: expected ':' after key %q", p.describe(), key)
		}
		p.off++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Fields = append(n.Fields, field{Key: key, KeyOff: keyOff, Value: v})
		p.skipSpace()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == '}' {
			p.off++
			return n, nil
		}
		return nil, p.errorf("unexpected %s: expected ',' or '}' after an object member", p.describe())
	}
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{Kind: kindArray, Off: p.off}
	p.off++ // [
	p.skipSpace()
	if p.off < len(p.data) && p.data[p.off] == ']' {
		p.off++
		return n, nil
	}
	for {
		p.skipSpace()
		if p.off < len(p.data) && p.data[p.off] == ']' {
			return nil, p.errorf("trailing comma before ']'")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
		p.skipSpace()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == ']' {
			p.off++
			return n, nil
		}
		return nil, p.errorf("unexpected %s: expected ',' or ']' after an array element", p.describe())
	}
}

func (p *parser) number() (*node, error) {
	start := p.off
	d := p.data
	i := p.off
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.off = i
		return nil, p.errorf("invalid number: expected a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.off = i
			return nil, p.errorf("invalid number: expected a digit after '.'")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.off = i
			return nil, p.errorf("invalid number: expected a digit in the exponent")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && d[i] >= '0' && d[i] <= '9' {
		p.off = i
		return nil, p.errorf("invalid number: leading zeros are not allowed")
	}
	text := string(d[start:i])
	p.off = i
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		// Out of range: JavaScript makes it ±Infinity (or 0), as does
		// ParseFloat's result; keep it.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return nil, &syntaxError{start, "invalid number " + text}
		}
	}
	return &node{Kind: kindNumber, Off: start, Str: text, Num: f}, nil
}

// str parses a JSON string at p.off.
func (p *parser) str() (string, error) {
	p.off++ // opening quote
	var b strings.Builder
	for {
		if p.off >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.off]
		switch {
		case c == '"':
			p.off++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character %U in a string: write it as an escape such as \\n", rune(c))
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			r, size := utf8.DecodeRune(p.data[p.off:])
			b.WriteRune(r)
			p.off += size
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	p.off++ // backslash
	if p.off >= len(p.data) {
		return p.errorf("unterminated string")
	}
	c := p.data[p.off]
	p.off++
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by an escaped low one is one
			// character; a lone surrogate cannot be UTF-8 and becomes
			// U+FFFD, as TextEncoder would make it.
			if r < 0xDC00 && p.off+1 < len(p.data) && p.data[p.off] == '\\' && p.data[p.off+1] == 'u' {
				save := p.off
				p.off += 2
				r2, err := p.hex4()
				if err != nil {
					return err
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					b.WriteRune(dec)
					return nil
				}
				p.off = save
			}
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default:
		p.off--
		return p.errorf("invalid escape \\%c in a string", c)
	}
	return nil
}

func (p *parser) hex4() (rune, error) {
	if p.off+4 > len(p.data) {
		return 0, p.errorf("invalid \\u escape: expected 4 hex digits")
	}
	v, err := strconv.ParseUint(string(p.data[p.off:p.off+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape: expected 4 hex digits")
	}
	p.off += 4
	return rune(v), nil
}
