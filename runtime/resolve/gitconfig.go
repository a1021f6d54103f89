package resolve

import (
	"strings"
)

// A GitConfigEntry is one variable of a git configuration file.
type GitConfigEntry struct {
	// Key is section[.subsection].name, with the section and the name
	// lower-cased as git compares them.
	Key, Value string
}

// ParseGitConfig reads the variables of a git configuration file
// (git-config(1), "Syntax"). It reports false for text it cannot read with
// certainty, which a caller must treat as the worst case.
func ParseGitConfig(data []byte) ([]GitConfigEntry, bool) {
	var out []GitConfigEntry
	section := ""
	text := strings.ReplaceAll(string(data), "\\\n", "") // continued lines
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.LastIndexByte(line, ']')
			if end < 0 {
				return out, false
			}
			head := line[1:end]
			rest := strings.TrimSpace(line[end+1:])
			if name, sub, ok := strings.Cut(head, " "); ok {
				sub = strings.TrimSpace(sub)
				if len(sub) < 2 || sub[0] != '"' || sub[len(sub)-1] != '"' {
					return out, false
				}
				section = strings.ToLower(name) + "." + sub[1:len(sub)-1]
			} else {
				section = strings.ToLower(head) // [a.b] is section a, subsection b
			}
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
			line = rest // a variable on the header's line
		}
		if section == "" {
			return out, false
		}
		name, value, hasValue := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" || strings.ContainsAny(name, " \t\"") {
			return out, false
		}
		v := "true"
		if hasValue {
			var ok bool
			if v, ok = gitValue(value); !ok {
				return out, false
			}
		}
		out = append(out, GitConfigEntry{Key: section + "." + name, Value: v})
	}
	return out, true
}

// gitValue reads a value: quotes removed, a comment outside quotes cut,
// the common escapes decoded.
func gitValue(s string) (string, bool) {
	var b strings.Builder
	quoted := false
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				return "", false
			}
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimRight(b.String(), " \t"), true
		default:
			b.WriteByte(c)
		}
	}
	if quoted {
		return "", false
	}
	return strings.TrimRight(b.String(), " \t"), true
}
