package compiler

import (
	"strings"

	"srt.dev/compiler/policy"
)

// Normalize turns a path entry as written into a symbolic, clean path
// (docs/reference.md#path-resolution), and reports whether it is a pattern:
//
//   - "~" and "~/x" start at ${HOME}; "~user/x" is not expanded (it is a
//     relative path, as in the reference);
//   - a relative path starts at ${CWD};
//   - "//" runs and "/./" collapse, and a trailing "/" or "/." goes;
//   - a trailing "/**" (the directory and everything beneath) goes, since a
//     path already covers what is beneath it; for a literal entry it is
//     part of the name and stays;
//   - ".." stays: it can only be folded where the path exists, at run time.
//
// An entry is a pattern when it is not literal and contains * ? [ or ].
func Normalize(spelling string, literal bool) (path string, pattern bool) {
	root, rest := "", spelling
	switch {
	case spelling == "~":
		root, rest = policy.Home, ""
	case strings.HasPrefix(spelling, "~/"):
		root, rest = policy.Home, spelling[2:]
	case strings.HasPrefix(spelling, "/"):
		root, rest = "", spelling
	default:
		root, rest = policy.Cwd, spelling
	}
	var segs []string
	for _, s := range strings.Split(rest, "/") {
		if s == "" || s == "." {
			continue
		}
		segs = append(segs, s)
	}
	if !literal {
		for len(segs) > 0 && segs[len(segs)-1] == "**" {
			segs = segs[:len(segs)-1]
		}
	}
	path = root + "/" + strings.Join(segs, "/")
	if len(segs) == 0 && root != "" {
		path = root
	}
	pattern = !literal && strings.ContainsAny(path, "*?[]")
	return path, pattern
}
