// Package gitconfig reads git configuration files the way git does
// (config.c, git_parse_source and parse_value), for the places srt needs
// them: which files git reads outside any repository (ReadOutside: the
// configuration files of policy.GitHostConfig and what they include),
// which srt protects; the core.hooksPath values that decide which
// directory holds a repository's hooks; and the check after a run of
// whether a configuration the command wrote runs or redirects anything.
//
// A reader that disagrees with git about one line is a hole: a variable
// git sees and srt does not survives the check. Parse therefore follows
// git's grammar character by character, and reports false for anything
// git would refuse; Safe accepts only a plain subset of that grammar, in
// which no reading of the text can differ.
package gitconfig

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// An Entry is one variable of a git configuration file.
type Entry struct {
	// Key is section[.subsection].name, with the section and the name
	// lower-cased as git compares them; the subsection keeps its case. A
	// variable before any section is its name alone, as git reads it.
	Key string
	// Value is the value as git reads it; a variable without "=" is
	// "true", as git takes it.
	Value string
}

// Parse reads the variables of a git configuration file. It reports
// false when git would refuse the text (and returns what came before).
func Parse(data []byte) ([]Entry, bool) {
	p := &parser{s: string(data)}
	if strings.HasPrefix(p.s, "\xef\xbb\xbf") {
		p.i = 3 // git skips a UTF-8 byte order mark
	}
	var out []Entry
	section := ""
	comment := false
	for {
		c, eof := p.next()
		switch {
		case c == '\n':
			if eof {
				return out, true
			}
			comment = false
		case comment, isSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			s, ok := p.section()
			if !ok {
				return out, false
			}
			section = s
		case isAlpha(c):
			name, value, eof, ok := p.variable(c)
			if !ok {
				return out, false
			}
			key := name // git reads a variable before any section by its name alone
			if section != "" {
				key = section + "." + name
			}
			out = append(out, Entry{Key: key, Value: value})
			if eof {
				return out, true
			}
		default:
			return out, false
		}
	}
}

type parser struct {
	s string
	i int
}

// next is git's get_next_char: "\r\n" reads as "\n", and the end of the
// text as a "\n" with eof set.
func (p *parser) next() (c byte, eof bool) {
	if p.i >= len(p.s) {
		return '\n', true
	}
	c = p.s[p.i]
	p.i++
	if c == '\r' && p.i < len(p.s) && p.s[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	return c, false
}

// isSpace is git's isspace (sane_ctype): space, tab, newline and carriage
// return, not C's vertical tab and form feed.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isKeyChar(c byte) bool {
	return isAlpha(c) || c >= '0' && c <= '9' || c == '-'
}
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// section is git's get_base_var, after "[": a name of key characters and
// dots, then "]" or a quoted subsection.
func (p *parser) section() (string, bool) {
	var b strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", false
		case c == ']':
			return b.String(), b.Len() > 0
		case isSpace(c):
			sub, ok := p.subsection()
			if !ok {
				return "", false
			}
			return b.String() + "." + sub, true // git takes "[ \"sub\"]" too
		case !isKeyChar(c) && c != '.':
			return "", false
		default:
			b.WriteByte(lower(c))
		}
	}
}

// subsection is git's get_extended_base_var: spaces, a quoted name in
// which a backslash takes the next character as it is, then "]".
func (p *parser) subsection() (string, bool) {
	c, _ := p.next()
	for isSpace(c) && c != '\n' {
		c, _ = p.next()
	}
	if c != '"' {
		return "", false
	}
	var b strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof || c == '\n':
			return "", false
		case c == '"':
			if c, _ := p.next(); c != ']' {
				return "", false
			}
			return cString(b.String()), true
		case c == '\\':
			c, eof = p.next()
			if eof || c == '\n' {
				return "", false
			}
		}
		b.WriteByte(c)
	}
}

// variable is git's get_value: a name of key characters (the first,
// first, already read), spaces, then the end of the line (the value
// "true") or "=" and a value. It reads the line's end; eof says whether
// that was the end of the text.
func (p *parser) variable(first byte) (name, value string, eof, ok bool) {
	var b strings.Builder
	b.WriteByte(lower(first))
	c, eof := p.next()
	for isKeyChar(c) {
		b.WriteByte(lower(c))
		c, eof = p.next()
	}
	for c == ' ' || c == '\t' {
		c, eof = p.next()
	}
	switch c {
	case '\n':
		return b.String(), "true", eof, true
	case '=':
		v, eof, ok := p.value()
		return b.String(), v, eof, ok
	}
	return "", "", false, false
}

// value is git's parse_value: spaces outside quotes collapse between
// words and are dropped at either end, "#" and ";" outside quotes start a
// comment to the end of the line, a backslash before the end of the line
// continues the value on the next (outside a comment only), and \t \b \n
// \\ \" are the only escapes. It reads the line's end.
func (p *parser) value() (v string, eof, ok bool) {
	var b strings.Builder
	quote, comment := false, false
	space := 0
	for {
		c, end := p.next()
		if c == '\n' {
			if quote {
				return "", end, false
			}
			return cString(b.String()), end, true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		if c == '\\' {
			c, _ = p.next()
			switch c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false, false
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		b.WriteByte(c)
	}
}

// cString is s as git uses it, a C string: up to its first NUL byte
// (git keeps a subsection or value that holds one, and reads it to there).
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// HooksPaths returns the core.hooksPath values of a configuration file,
// as written ("~/" and relative paths are the caller's to resolve). Text
// git would refuse counts up to where it is refused.
func HooksPaths(data []byte) []string {
	entries, _ := Parse(data)
	var out []string
	for _, e := range entries {
		if e.Key == "core.hookspath" && e.Value != "" {
			out = append(out, e.Value)
		}
	}
	return out
}

// Plain reports whether data is written in the plain form git itself
// writes (git init, git clone, git config): section headers alone on
// their line, one "name = value" per line, no comments, quotes, escapes,
// continued lines, carriage returns or control characters. In this form
// every reader takes the same variables from the text; Parse's answer
// for it is git's.
func Plain(data []byte) bool {
	s := string(data)
	if s == "" {
		return true
	}
	if !strings.HasSuffix(s, "\n") {
		return false
	}
	for _, line := range strings.Split(s[:len(s)-1], "\n") {
		if !plainLine(line) {
			return false
		}
	}
	return true
}

func plainLine(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c == '\\' || c == '#' || c == ';' {
			return false
		}
	}
	if line == "" {
		return true
	}
	if line[0] == '[' {
		head, ok := strings.CutSuffix(line[1:], "]")
		if !ok {
			return false
		}
		name, sub, hasSub := strings.Cut(head, " ")
		if name == "" || !allKey(name, true) {
			return false
		}
		if hasSub {
			inner, ok := strings.CutPrefix(sub, "\"")
			if ok {
				inner, ok = strings.CutSuffix(inner, "\"")
			}
			if !ok || strings.ContainsAny(inner, "\"") {
				return false
			}
		}
		return true
	}
	body := strings.TrimLeft(line, " \t")
	name, value, ok := strings.Cut(body, " = ")
	if !ok || name == "" || !isAlpha(name[0]) || !allKey(name, false) {
		return false
	}
	// git turns a tab inside a value into a space, and drops spaces at
	// either end.
	return !strings.ContainsAny(value, "\"\t") && value == strings.TrimSpace(value)
}

func allKey(s string, dots bool) bool {
	for i := 0; i < len(s); i++ {
		if !isKeyChar(s[i]) && !(dots && s[i] == '.') {
			return false
		}
	}
	return true
}

// MaxFile is the most ReadFile reads.
const MaxFile = 1 << 20

// ReadFile reads a configuration file that any process could have
// written: only a regular file (a link is followed, as git follows it),
// opened without blocking, at most MaxFile bytes.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFile)
	}
	return b, nil
}
