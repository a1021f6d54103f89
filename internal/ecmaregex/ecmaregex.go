// Package ecmaregex checks the syntax of ECMAScript regular expressions and
// counts their capture groups, as `new RegExp(source)` does in Node (no
// flags, so the lenient Annex B grammar of ECMA-262 applies).
//
// Go's regexp package implements RE2, which refuses lookbehind,
// backreferences and named groups written `(?<name>…)`, and accepts things
// JavaScript refuses; a settings file written for the reference runtime uses
// JavaScript's syntax, so this package follows ECMA-262 instead. It only
// checks syntax; nothing here matches text.
package ecmaregex

import (
	"fmt"
	"strconv"
	"unicode"
)

// Check parses src as an ECMAScript pattern without flags and returns the
// number of capture groups (numbered and named), or an error naming the
// first problem, worded like V8's.
func Check(src string) (captures int, err error) {
	p := &parser{src: []rune(src), names: map[string]bool{}}
	if err := p.disjunction(0); err != nil {
		return 0, err
	}
	if p.pos < len(p.src) {
		return 0, p.errorf("unmatched ')'")
	}
	// "\k<name>" refers to a group only in a pattern that has named groups;
	// elsewhere Annex B reads it as the letter k.
	for _, ref := range p.namedRefs {
		if len(p.names) > 0 && !p.names[ref] {
			return 0, p.errorf("invalid named capture referenced")
		}
	}
	return p.groups, nil
}

type parser struct {
	src       []rune
	pos       int
	groups    int
	names     map[string]bool
	namedRefs []string
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("/%s/: %s", string(p.src), fmt.Sprintf(format, args...))
}

func (p *parser) peek(off int) rune {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return -1
}

// disjunction parses alternatives until ")" (depth > 0) or the end.
func (p *parser) disjunction(depth int) error {
	for {
		if err := p.alternative(depth); err != nil {
			return err
		}
		if p.peek(0) != '|' {
			return nil
		}
		p.pos++
	}
}

func (p *parser) alternative(depth int) error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '|' {
			return nil
		}
		if c == ')' {
			if depth == 0 {
				return p.errorf("unmatched ')'")
			}
			return nil
		}
		quantifiable, err := p.term(depth)
		if err != nil {
			return err
		}
		if q, err := p.quantifier(); err != nil {
			return err
		} else if q && !quantifiable {
			return p.errorf("nothing to repeat")
		}
	}
	return nil
}

// term parses one atom or assertion and reports whether a quantifier may
// follow it.
func (p *parser) term(depth int) (bool, error) {
	c := p.src[p.pos]
	switch c {
	case '^', '$':
		p.pos++
		return false, nil
	case '*', '+', '?':
		return false, p.errorf("nothing to repeat")
	case '{':
		if p.bracedQuantifierAt(p.pos) > 0 {
			return false, p.errorf("nothing to repeat")
		}
		p.pos++ // Annex B: a lone "{" is a literal
		return true, nil
	case '.', ']', '}':
		p.pos++
		return true, nil
	case '[':
		return true, p.class()
	case '\\':
		return p.atomEscape()
	case '(':
		return p.group(depth)
	}
	p.pos++
	return true, nil
}

func (p *parser) group(depth int) (bool, error) {
	p.pos++ // (
	quantifiable := true
	if p.peek(0) == '?' {
		switch {
		case p.peek(1) == ':':
			p.pos += 2
		case p.peek(1) == '=' || p.peek(1) == '!':
			p.pos += 2 // Annex B: lookaheads may be quantified
		case p.peek(1) == '<' && (p.peek(2) == '=' || p.peek(2) == '!'):
			p.pos += 3
			quantifiable = false
		case p.peek(1) == '<':
			p.pos += 2
			name, err := p.groupName()
			if err != nil {
				return false, err
			}
			if p.names[name] {
				return false, p.errorf("duplicate capture group name")
			}
			p.names[name] = true
			p.groups++
		default:
			return false, p.errorf("invalid group")
		}
	} else {
		p.groups++
	}
	if err := p.disjunction(depth + 1); err != nil {
		return false, err
	}
	if p.peek(0) != ')' {
		return false, p.errorf("unterminated group")
	}
	p.pos++
	return quantifiable, nil
}

// groupName parses "name>" after "(?<" or "\k<".
func (p *parser) groupName() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != '>' {
		r := p.src[p.pos]
		first := p.pos == start
		if !(r == '$' || r == '_' || unicode.IsLetter(r) || (!first && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || r == '\u200c' || r == '\u200d'))) {
			return "", p.errorf("invalid capture group name")
		}
		p.pos++
	}
	if p.pos >= len(p.src) || p.pos == start {
		return "", p.errorf("invalid capture group name")
	}
	name := string(p.src[start:p.pos])
	p.pos++ // >
	return name, nil
}

func (p *parser) atomEscape() (bool, error) {
	p.pos++ // backslash
	if p.pos >= len(p.src) {
		return false, p.errorf("\\ at end of pattern")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'b', 'B':
		return false, nil
	case 'k':
		if p.peek(0) == '<' {
			p.pos++
			save := p.pos
			name, err := p.groupName()
			if err != nil {
				// Without named groups "\k<" is an identity escape; decide
				// once the whole pattern is known.
				p.pos = save
				p.namedRefs = append(p.namedRefs, "\x00invalid")
				return true, nil
			}
			p.namedRefs = append(p.namedRefs, name)
		} else {
			p.namedRefs = append(p.namedRefs, "\x00invalid")
		}
		return true, nil
	}
	return true, nil
}

// class parses a character class and checks its ranges.
func (p *parser) class() error {
	p.pos++ // [
	if p.peek(0) == '^' {
		p.pos++
	}
	for {
		if p.pos >= len(p.src) {
			return p.errorf("unterminated character class")
		}
		if p.src[p.pos] == ']' {
			p.pos++
			return nil
		}
		lo, loIsSet, err := p.classAtom()
		if err != nil {
			return err
		}
		if p.peek(0) == '-' && p.peek(1) != ']' && p.peek(1) != -1 {
			p.pos++
			hi, hiIsSet, err := p.classAtom()
			if err != nil {
				return err
			}
			if !loIsSet && !hiIsSet && lo > hi {
				return p.errorf("range out of order in character class")
			}
		}
	}
}

// classAtom returns the code point of one class member, or isSet for a
// class escape such as \d.
func (p *parser) classAtom() (r rune, isSet bool, err error) {
	c := p.src[p.pos]
	p.pos++
	if c != '\\' {
		return c, false, nil
	}
	if p.pos >= len(p.src) {
		return 0, false, p.errorf("\\ at end of pattern")
	}
	e := p.src[p.pos]
	p.pos++
	switch e {
	case 'd', 'D', 's', 'S', 'w', 'W':
		return 0, true, nil
	case 'b':
		return '\b', false, nil
	case 'n':
		return '\n', false, nil
	case 'r':
		return '\r', false, nil
	case 't':
		return '\t', false, nil
	case 'v':
		return '\v', false, nil
	case 'f':
		return '\f', false, nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		// Annex B legacy octal escape: up to three digits, at most 0377.
		v := e - '0'
		for i := 0; i < 2 && p.peek(0) >= '0' && p.peek(0) <= '7' && v*8+(p.peek(0)-'0') <= 0377; i++ {
			v = v*8 + (p.peek(0) - '0')
			p.pos++
		}
		return v, false, nil
	case 'x':
		if v, ok := p.hex(2); ok {
			return v, false, nil
		}
		return 'x', false, nil
	case 'u':
		if v, ok := p.hex(4); ok {
			return v, false, nil
		}
		return 'u', false, nil
	case 'c':
		if l := p.peek(0); l >= 0 && (unicode.IsLetter(l) && l < 128 || l >= '0' && l <= '9' || l == '_') {
			p.pos++
			return l % 32, false, nil
		}
		p.pos-- // Annex B: "\c" stands for a backslash followed by "c"
		return '\\', false, nil
	}
	return e, false, nil
}

func (p *parser) hex(n int) (rune, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += n
	return rune(v), true
}

// quantifier consumes a quantifier if one follows and reports whether it did.
func (p *parser) quantifier() (bool, error) {
	switch p.peek(0) {
	case '*', '+', '?':
		p.pos++
	case '{':
		n := p.bracedQuantifierAt(p.pos)
		if n == 0 {
			return false, nil // Annex B: not a quantifier, a literal "{"
		}
		if n < 0 {
			return false, p.errorf("numbers out of order in {} quantifier")
		}
		p.pos += n
	default:
		return false, nil
	}
	if p.peek(0) == '?' {
		p.pos++
	}
	return true, nil
}

// bracedQuantifierAt returns the length of a {n}, {n,} or {n,m} quantifier
// at i, 0 if there is none, or -1 if n > m.
func (p *parser) bracedQuantifierAt(i int) int {
	j := i + 1
	digits := func() (uint64, bool) {
		start := j
		for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			j++
		}
		if j == start {
			return 0, false
		}
		v, err := strconv.ParseUint(string(p.src[start:j]), 10, 64)
		if err != nil {
			v = 1<<64 - 1
		}
		return v, true
	}
	lo, ok := digits()
	if !ok {
		return 0
	}
	hi := lo
	if j < len(p.src) && p.src[j] == ',' {
		j++
		if v, ok := digits(); ok {
			hi = v
		} else {
			hi = 1<<64 - 1
		}
	}
	if j >= len(p.src) || p.src[j] != '}' {
		return 0
	}
	if lo > hi {
		return -1
	}
	return j + 1 - i
}
