package policy

import (
	"strings"
)

// Normalize turns a path entry as written into a symbolic, clean path
// (docs/reference.md#path-resolution), and reports whether it is a pattern:
//
//   - "~" and "~/x" start at ${HOME}; "~user/x" is not expanded (it is a
//     relative path, as in the reference);
//   - a relative path starts at ${CWD}, with "." and ".." folded
//     lexically, as resolving it against the working directory does
//     ("./app/../conf" is ${CWD}/conf); a ".." that would climb above the
//     working directory stays ("../x" is ${CWD}/../x);
//   - "//" runs and "/./" collapse, and a trailing "/" or "/." goes;
//   - a trailing "/**" (the directory and everything beneath) goes, since a
//     path already covers what is beneath it; for a literal entry it is
//     part of the name and stays;
//   - ".." in an absolute or ~ path stays: it can only be folded where the
//     path exists, at run time.
//
// An entry is a pattern when it is not literal and contains * ? [ or ].
func Normalize(spelling string, literal bool) (path Path, pattern bool) {
	n := normalize(spelling, literal)
	return n.path, n.pattern
}

// ParsePathRule is the rule of a path entry as written (see Normalize),
// with origin o: the entry's spelling is kept in Written when Normalize
// folded a ".." of it.
func ParsePathRule(spelling string, literal bool, o Origin) PathRule {
	n := normalize(spelling, literal)
	r := PathRule{Path: n.path, Pattern: n.pattern, Literal: literal, TrailingSeparator: n.trailing, Origin: o}
	if n.folded {
		r.Written = spelling
	}
	return r
}

// normalized is an entry as Normalize reads it, with what the reading
// dropped that a target may need.
type normalized struct {
	path    Path
	pattern bool
	// folded is set when a ".." of a relative spelling was folded.
	folded bool
	// trailing is set for a spelling with glob characters that ends in
	// "/" (see PathRule.TrailingSeparator).
	trailing bool
}

func normalize(spelling string, literal bool) normalized {
	root, rest := Cwd, spelling
	switch {
	case spelling == "~":
		root, rest = Home, ""
	case strings.HasPrefix(spelling, "~/"):
		root, rest = Home, spelling[2:]
	case strings.HasPrefix(spelling, "/"):
		root = Abs
	}
	var out normalized
	var segs []string
	for _, s := range strings.Split(rest, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == ".." && root == Cwd && len(segs) > 0 && segs[len(segs)-1] != "..":
			segs = segs[:len(segs)-1]
			out.folded = true
			continue
		}
		segs = append(segs, s)
	}
	if !literal {
		for len(segs) > 0 && segs[len(segs)-1] == "**" {
			segs = segs[:len(segs)-1]
		}
	}
	out.path = Path{root: root, rel: strings.Join(segs, "/")}
	out.pattern = !literal && strings.ContainsAny(out.path.rel, "*?[]")
	out.trailing = !literal && strings.HasSuffix(spelling, "/") && strings.ContainsAny(spelling, "*?[]")
	return out
}
