package bwrap

import (
	"fmt"
	"strconv"
	"strings"
)

// A ParseError names the line of linux/bwrap.args that could not be read.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads linux/bwrap.args back into its steps, each with the line it
// came from. It is the inverse of Render and knows no option or directive
// by name: a line starting with "--" is bubblewrap arguments, passed on
// word for word; a line starting with "@" is a directive and its operand,
// which the runtime resolves (and refuses when it does not know it).
// Comments ("#" at the start of a word) and blank lines carry no meaning.
// A word is plain text without blanks, or a Go-syntax quoted string.
func Parse(b []byte) (Plan, error) {
	var pl Plan
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		words, comment, err := splitWords(line)
		if err != nil {
			return Plan{}, &ParseError{n, err.Error()}
		}
		if len(words) == 0 {
			continue
		}
		first := words[0]
		switch {
		case strings.HasPrefix(first.text, "--") && !first.quoted:
			args := make([]string, len(words))
			for j, w := range words {
				args[j] = w.text
			}
			pl.Steps = append(pl.Steps, Step{Args: args, Line: n, Comment: comment})
		case strings.HasPrefix(first.text, "@") && !first.quoted:
			name := strings.TrimPrefix(first.text, "@")
			if name == "" {
				return Plan{}, &ParseError{n, "a directive needs a name after @"}
			}
			d, q, hasQ := strings.Cut(name, ":")
			if d == "" || hasQ && q == "" {
				return Plan{}, &ParseError{n, fmt.Sprintf("@%s: a directive is @name or @name:qualifier", name)}
			}
			s := Step{Directive: Directive(d), Qualifier: Qualifier(q), Line: n, Comment: comment}
			switch rest := words[1:]; {
			case len(rest) == 1:
				s.Operand = rest[0].text
			case len(rest) > 1:
				// Parameters: plain words, written as they are.
				var ws []string
				for _, w := range rest {
					if w.quoted {
						return Plan{}, &ParseError{n, fmt.Sprintf("@%s: a quoted word among parameters", name)}
					}
					ws = append(ws, w.text)
				}
				s.Operand, s.Params = strings.Join(ws, " "), true
			}
			pl.Steps = append(pl.Steps, s)
		default:
			return Plan{}, &ParseError{n, fmt.Sprintf("%q is neither a bubblewrap option (--name) nor a step (@name)", first.text)}
		}
	}
	return pl, nil
}

type word struct {
	text   string
	quoted bool
}

// splitWords splits a line into words, up to a comment, and returns the
// comment's text.
func splitWords(line string) ([]word, string, error) {
	var out []word
	for {
		line = strings.TrimLeft(line, " \t\r")
		switch {
		case line == "":
			return out, "", nil
		case line[0] == '#':
			return out, strings.TrimSpace(line[1:]), nil
		case line[0] == '"':
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, "", fmt.Errorf("unterminated or invalid quoted word %s", line)
			}
			text, err := strconv.Unquote(q)
			if err != nil {
				return nil, "", fmt.Errorf("invalid quoted word %s", q)
			}
			line = line[len(q):]
			if line != "" && line[0] != ' ' && line[0] != '\t' && line[0] != '\r' {
				return nil, "", fmt.Errorf("a quoted word %s runs into %q", q, line)
			}
			out = append(out, word{text, true})
		default:
			end := strings.IndexAny(line, " \t\r")
			if end < 0 {
				end = len(line)
			}
			if w := line[:end]; !plain(w) {
				return nil, "", fmt.Errorf("the word %s must be written quoted, as a Go string (%s)", strconv.Quote(w), strconv.Quote(w))
			}
			out = append(out, word{line[:end], false})
			line = line[end:]
		}
	}
}

// plain reports whether s may be written as it is, unquoted: not empty,
// and no blank, control character, '#', '"', '\\' or byte above ASCII.
// Render quotes every other word, and Parse reads no other unquoted, so
// that a plan reads back one way only.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '#' || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
