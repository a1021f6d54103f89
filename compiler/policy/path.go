package policy

import (
	"errors"
	"fmt"
	"strings"
)

// A Root is where a policy path starts: "/", or a symbolic root that
// stands for a fact of the host the runtime fills in, so that the same
// settings give the same policy on every machine. Its value is the root
// as a path spells it.
//
// Abs, Home and Cwd are the roots of the POSIX reading. The Windows
// reading (see the Windows type) has Home and Cwd too, and its own: a
// drive ("C:"), UNC, HomeDrive and HomeDrivePath. They are
// roots of the same type because the same fields hold paths of both
// readings, and plan.json carries them: the parser has to know every root
// a reading produces to refuse a path that starts at none.
type Root string

// The roots.
const (
	// Abs is the root of an absolute POSIX path.
	Abs Root = "/"
	// Home is the user's home directory.
	Home Root = "${HOME}"
	// Cwd is the working directory srt runs the command in.
	Cwd Root = "${CWD}"
	// HomeDrive is %HOMEDRIVE% (Windows reading): the drive of the home
	// directory, such as "C:". Like a drive, it is written with a "/"
	// after it even alone ("${HOMEDRIVE}/", the drive's root).
	HomeDrive Root = "${HOMEDRIVE}"
	// HomeDrivePath is %HOMEDRIVE%%HOMEPATH% (Windows reading): the home
	// directory as those two variables spell it. %HOMEPATH% alone names
	// no directory, so it is never a root.
	HomeDrivePath Root = homeDriveMarker + homePathMarker
	// UNC is the root of a UNC path (Windows reading), "//server/share/…":
	// the server and the share are the path's first two elements.
	UNC Root = "//"
)

// The markers of the Windows reading's roots.
const (
	homeDriveMarker = "${HOMEDRIVE}"
	homePathMarker  = "${HOMEPATH}"
)

// driveRoot is the root of drive letter, a letter from A to Z in either
// case, upper-cased ("C:"). It panics on another byte.
func driveRoot(letter byte) Root {
	if 'a' <= letter && letter <= 'z' {
		letter -= 'a' - 'A'
	}
	if letter < 'A' || letter > 'Z' {
		panic(fmt.Sprintf("policy: driveRoot(%q): not a drive letter", letter))
	}
	return Root([]byte{letter, ':'})
}

// dir reports whether r is a directory, whose path alone is r itself
// ("${HOME}"). The path of any other root alone ends in "/" ("/", "C:/",
// "${HOMEDRIVE}/": the root of a volume); a UNC path always has its
// server and share.
func (r Root) dir() bool { return r == Home || r == Cwd || r == HomeDrivePath }

// prefix is what r's paths start with before the "/" that leads their
// elements.
func (r Root) prefix() string {
	switch r {
	case Abs:
		return ""
	case UNC:
		return "/"
	}
	return string(r)
}

// Symbolic reports whether r stands for a directory of the host that the
// runtime fills in (Home, Cwd, HomeDrive, HomeDrivePath), rather than
// naming one itself.
func (r Root) Symbolic() bool {
	return r == Home || r == Cwd || r == HomeDrive || r == HomeDrivePath
}

// Path is r itself: the root directory or volume ("${HOME}", "/"). UNC
// has no path of its own.
func (r Root) Path() Path { return Path{root: r} }

// Join is the path of rel below r; see Path.Join.
func (r Root) Join(rel string) Path { return r.Path().Join(rel) }

// A Path is a symbolic path of the policy: a root, and the elements below
// it. It is clean the way Normalize and NormalizeWindows leave it: no
// empty element ("//"), no "." element, no trailing "/". ".." elements
// stay (a relative spelling may climb above the working directory, and
// only the host can fold one in an absolute or ~ path), and so do names
// that hold a marker ("a/${HOME}" is ${CWD}/a/${HOME}, a file of that
// name). Glob characters are plain characters here: whether a path is a
// pattern is said by the rule that holds it.
//
// The zero Path is no path: it prints as "" and refuses to be written.
// Paths compare with ==.
type Path struct {
	root Root
	// rel is the elements below root, "/"-separated; "" for the root.
	rel string
}

// ParsePath reads a path as String spells it, refusing any other
// spelling: the text must start at a root ("/", "${HOME}", "${CWD}", a
// drive "C:/", "//server/share", "${HOMEDRIVE}/",
// "${HOMEDRIVE}${HOMEPATH}"), the root must be followed by "/" or end
// the path, and the elements must be clean (see Path). plan.json is
// read back from disk, so a path that no normaliser wrote is an error,
// never a guess.
func ParsePath(s string) (Path, error) {
	root, rest, err := parseRoot(s)
	if err != nil {
		return Path{}, err
	}
	if rest == "" {
		if !root.dir() {
			return Path{}, fmt.Errorf("policy path %q: the root %s is written with %q after it", s, root, "/")
		}
		return Path{root: root}, nil
	}
	if rest[0] != '/' {
		return Path{}, fmt.Errorf("policy path %q: the root %s must be followed by %q or end the path", s, root, "/")
	}
	rel := rest[1:]
	if rel == "" && root.dir() {
		return Path{}, fmt.Errorf("policy path %q ends in %q", s, "/")
	}
	if rel != "" {
		if err := checkRel(rel); err != nil {
			return Path{}, fmt.Errorf("policy path %q: %w", s, err)
		}
	}
	if root == UNC && strings.Count(rel, "/") < 1 {
		return Path{}, fmt.Errorf("policy path %q: a UNC path names a server and a share", s)
	}
	return Path{root: root, rel: rel}, nil
}

// CleanPath reads s as ParsePath does, after dropping what a clean
// spelling has not: empty and "." elements ("//", "/./") and a trailing
// "/". ".." stays: only the host can fold it. It is for paths a person
// asks about (a question to the evaluator), never for plan.json.
func CleanPath(s string) (Path, error) {
	root, rest, err := parseRoot(s)
	if err != nil {
		return Path{}, err
	}
	if rest == "" || rest[0] != '/' {
		return ParsePath(s) // a root alone, or the error of a root followed by a name
	}
	var elems []string
	for _, e := range strings.Split(rest, "/") {
		if e != "" && e != "." {
			elems = append(elems, e)
		}
	}
	p := Path{root: root, rel: strings.Join(elems, "/")}
	return ParsePath(p.String()) // a UNC path still needs its share
}

// parseRoot splits s into its root and the rest, "" or starting with "/".
func parseRoot(s string) (Root, string, error) {
	switch {
	case s == "":
		return "", "", errors.New("empty policy path")
	case strings.HasPrefix(s, "//"):
		return UNC, s[1:], nil
	case s[0] == '/':
		return Abs, s, nil
	case len(s) >= 2 && s[1] == ':' && 'A' <= s[0] && s[0] <= 'Z':
		return Root(s[:2]), s[2:], nil
	}
	// HomeDrivePath before HomeDrive, which it starts with.
	for _, r := range []Root{Home, Cwd, HomeDrivePath, HomeDrive} {
		if rest, ok := strings.CutPrefix(s, string(r)); ok {
			return r, rest, nil
		}
	}
	return "", "", fmt.Errorf("policy path %q starts at no root: it must start with /, ${HOME} or ${CWD} (or, read the Windows way, a drive, //server/share, ${HOMEDRIVE} or ${HOMEDRIVE}${HOMEPATH})", s)
}

// checkRel refuses elements that are not clean.
func checkRel(rel string) error {
	for _, e := range strings.Split(rel, "/") {
		switch e {
		case "":
			return errors.New(`an empty element ("//" or a trailing "/")`)
		case ".":
			return errors.New(`a "." element`)
		}
	}
	return nil
}

// MustParsePath is ParsePath for a path the program spells: it panics on
// an error.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Root is where p starts.
func (p Path) Root() Root { return p.root }

// Rel is the elements of p below its root, "/"-separated: "" for the root
// itself, ".ssh" for ${HOME}/.ssh, "etc/x" for /etc/x, "srv/share/x" for
// //srv/share/x.
func (p Path) Rel() string { return p.rel }

// Equal reports whether p and q are the same path, as p == q does (for
// comparers that look for the method, such as go-cmp's).
func (p Path) Equal(q Path) bool { return p == q }

// IsZero reports whether p is the zero Path, no path.
func (p Path) IsZero() bool { return p.root == "" }

// Join is p with elem below it: one or more clean elements,
// "/"-separated (".ssh", ".claude/commands"); "" is p itself. It panics
// on an empty or "." element (a path the program spells wrong), or on
// the zero Path.
func (p Path) Join(elem string) Path {
	if p.IsZero() {
		panic("policy: Join on the zero Path")
	}
	if elem == "" {
		return p
	}
	if err := checkRel(elem); err != nil {
		panic(fmt.Sprintf("policy: %s.Join(%q): %v", p, elem, err))
	}
	if p.rel == "" {
		return Path{root: p.root, rel: elem}
	}
	return Path{root: p.root, rel: p.rel + "/" + elem}
}

// String is p as the policy spells it: "/etc/x", "/", "${HOME}",
// "${CWD}/src", "C:/", "C:/x", "//srv/share/x", "${HOMEDRIVE}/",
// "${HOMEDRIVE}${HOMEPATH}/.aws". The zero Path is "".
func (p Path) String() string {
	switch {
	case p.root == "":
		return ""
	case p.rel == "" && p.root.dir():
		return string(p.root)
	}
	return p.root.prefix() + "/" + p.rel
}

// Spell is p with its root written as root, the way a platform names it
// ("%USERPROFILE%" for Home): root, then "/" and the elements; for the
// root itself, root alone, or root and "/" for a volume ("%HOMEDRIVE%/").
// A name below the root that looks like a marker ("${HOME}" in
// ${CWD}/${HOME}) stays as it is: only the root is respelled.
func (p Path) Spell(root string) string {
	if p.rel == "" && p.root.dir() {
		return root
	}
	return root + "/" + p.rel
}

// MarshalText writes String; the zero Path is an error.
func (p Path) MarshalText() ([]byte, error) {
	if p.IsZero() {
		return nil, errors.New("policy: the zero Path has no spelling")
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads what MarshalText writes (see ParsePath).
func (p *Path) UnmarshalText(b []byte) error {
	q, err := ParsePath(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Expand is p on one host: its root replaced by home or cwd, the
// directories that stand for Home and Cwd there, its elements as they are
// (".." kept, for the caller to fold or not). One trailing "/" of the
// directory is dropped, unless it is a root itself ("/", "C:/"). ok is
// false when the directory of p's root is not known: home or cwd is "",
// or, for HomeDrive and HomeDrivePath, home does not start with a drive
// letter ("C:"); HomeDrive is then the drive of home, and HomeDrivePath
// home itself (%HOMEDRIVE%%HOMEPATH% is %USERPROFILE% on a usual Windows
// machine). A root that is no host fact (Abs, a drive, UNC) needs
// neither: p is its String.
func (p Path) Expand(home, cwd string) (string, bool) {
	var dir string
	switch p.root {
	case Home:
		dir = home
	case Cwd:
		dir = cwd
	case HomeDrive, HomeDrivePath:
		if len(home) < 2 || home[1] != ':' || !isLetter(home[0]) {
			return "", false
		}
		dir = home
		if p.root == HomeDrive {
			dir = home[:2] + "/"
		}
	case "":
		return "", false
	default:
		return p.String(), true
	}
	if dir == "" {
		return "", false
	}
	if d := strings.TrimSuffix(dir, "/"); d != "" && !(len(d) == 2 && d[1] == ':') {
		dir = d
	}
	switch {
	case p.rel == "":
		return dir, true
	case strings.HasSuffix(dir, "/"):
		return dir + p.rel, true
	}
	return dir + "/" + p.rel, true
}

// Within is p, a path on a host, written from r, whose directory there
// is dir: the inverse of Expand ("/home/me/x" from Home, with dir
// "/home/me", is ${HOME}/x). dir is clean, a root such as "/" ending in
// "/". ok is false when p does not lie at or below dir, or the rest of p
// is not clean.
func (r Root) Within(dir, p string) (Path, bool) {
	var rel string
	switch {
	case r == "" || dir == "":
		return Path{}, false
	case p == dir:
	case strings.HasSuffix(dir, "/") && strings.HasPrefix(p, dir):
		rel = p[len(dir):]
	case strings.HasPrefix(p, dir+"/"):
		rel = p[len(dir)+1:]
	default:
		return Path{}, false
	}
	if rel != "" && checkRel(rel) != nil {
		return Path{}, false
	}
	return Path{root: r, rel: rel}, true
}

// Contains reports whether q is p or lies below it, by their spellings:
// the same root, and p's elements a prefix of q's ("${HOME}" contains
// "${HOME}/x" but not "${HOME}x"; "/" contains every absolute path). Paths
// from different roots are never inside each other, even "${HOME}" and
// "/": where a symbolic root lies is a fact of the host (Expand). ".." is
// an element like any other.
func (p Path) Contains(q Path) bool {
	if p.IsZero() || p.root != q.root {
		return false
	}
	return p.rel == "" || q.rel == p.rel || strings.HasPrefix(q.rel, p.rel+"/")
}

// Under reports whether p is q or lies below it: q.Contains(p).
func (p Path) Under(q Path) bool { return q.Contains(p) }

// Parent is p without its last element: "${HOME}" for "${HOME}/x", "/"
// for "/x", "C:/" for "C:/x". ok is false for a root itself, which has
// none. The elements are names: the parent of "/a/.." is "/a".
func (p Path) Parent() (parent Path, ok bool) {
	if p.rel == "" {
		return Path{}, false
	}
	i := strings.LastIndexByte(p.rel, '/')
	if i < 0 {
		return Path{root: p.root}, true
	}
	return Path{root: p.root, rel: p.rel[:i]}, true
}

// ancestors calls f with p and each of its ancestors, nearest first, down
// to the root itself: a directory root's path ("${HOME}") is included, a
// volume's ("/", "C:/") is not, as the matchers have always walked them.
// It stops when f returns true, and reports whether one did.
func (p Path) ancestors(f func(Path) bool) bool {
	for a, ok := p, true; ok; a, ok = a.Parent() {
		if a.rel == "" && !a.root.dir() {
			return false
		}
		if f(a) {
			return true
		}
	}
	return false
}
