//go:build unix

package main

import (
	"strings"
)

// srt proxy sends the decider the path as the client spelled it, and
// forwards it so: "/./admin", "/x/../admin" and "/%61dmin" are three
// spellings of "/admin" to most servers. A decider that compares paths
// must compare what the upstream will make of them. deniedPath does so
// under two readings, and denies when either reaches a denied prefix:
//
//   - cleanPath, the normal form of RFC 3986 §6.2.2 that every server
//     agrees on, with runs of slashes merged as most servers do;
//   - lenientPath, what the most lenient servers make of a path: every
//     escape decoded (again, while one is left: %252e), backslashes read
//     as slashes, ;parameters dropped from segments (Tomcat, Jetty).
//
// Paths are compared case-sensitively, as RFC 3986 has it: /ADMIN is not
// /admin. A decider in front of a server that ignores case (IIS, a
// case-insensitive file system) must fold the case of both sides.

// deniedPath reports whether path, as the proxy forwards it, may reach
// one of prefixes (each read as cleanPath reads a path), and which one.
// A prefix is a string prefix: /admin covers /administrator too.
func deniedPath(path string, prefixes []string) (string, bool) {
	strict, lenient := cleanPath(path), lenientPath(path)
	for _, p := range prefixes {
		c := cleanPath(p)
		if strings.HasPrefix(strict, c) || strings.HasPrefix(lenient, c) {
			return p, true
		}
	}
	return "", false
}

// cleanPath is the normal form of a path: the query and fragment cut
// off, escapes of unreserved characters decoded and the others written
// in upper case (RFC 3986 §6.2.2.1, §6.2.2.2), dot segments removed
// (RFC 3986 §5.2.4); then every run of slashes becomes one. An empty
// path is "/".
func cleanPath(p string) string {
	p = cutQuery(p)
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if c, ok := escape(p, i); ok {
			if unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(p[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return mergeSlashes(removeDotSegments(b.String()))
}

// lenientPath is p as the most lenient servers read it: the query and
// fragment cut off, every escape decoded, and decoded again while one is
// left (up to 4 times), backslashes made slashes, the ;parameters of
// each segment dropped ("..;" is ".."), runs of slashes merged, dot
// segments removed, runs of slashes merged again.
func lenientPath(p string) string {
	p = cutQuery(p)
	for range 4 {
		d := decodeAll(p)
		if d == p {
			break
		}
		p = d
	}
	p = strings.ReplaceAll(p, `\`, "/")
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return mergeSlashes(removeDotSegments(mergeSlashes(strings.Join(segs, "/"))))
}

// cutQuery cuts a query or fragment off p (the proxy sends the query
// apart and drops the fragment; a decider should not rely on it).
func cutQuery(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "/"
	}
	return p
}

// escape reports whether p[i:] begins a percent-escape, and its byte.
func escape(p string, i int) (byte, bool) {
	if p[i] != '%' || i+2 >= len(p) {
		return 0, false
	}
	h, ok1 := unhex(p[i+1])
	l, ok2 := unhex(p[i+2])
	return h<<4 | l, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unreserved reports whether c is an unreserved character of RFC 3986
// §2.3, whose escape means the character itself.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// decodeAll decodes every well-formed escape of p once.
func decodeAll(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if c, ok := escape(p, i); ok {
			b.WriteByte(c)
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// removeDotSegments is the algorithm of RFC 3986 §5.2.4, step by step.
func removeDotSegments(in string) string {
	var out string
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		case in == "/..":
			in = "/"
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		case in == "." || in == "..":
			in = ""
		default:
			end := strings.IndexByte(in[1:], '/') + 1
			if end == 0 {
				end = len(in)
			}
			out, in = out+in[:end], in[end:]
		}
	}
	return out
}

// mergeSlashes makes every run of slashes one slash.
func mergeSlashes(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return p
}
