package seatbelt

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"srt.dev/compiler/policy"
)

// An entry is one path or pattern as the profile spells it (docs/reference.md#macos-filters): a
// symbolic root (a sandbox-exec parameter), literal text after it, and for
// a pattern the glob after that. Splitting literal text from the glob lets
// a reading anchor a glob at a directory whose name has brackets.
type entry struct {
	root   string // "", or the marker of policy.Home or policy.Cwd
	lit    string // literal text after root: "" or "/..."; the whole path when root is ""
	pat    string // glob after lit; "" for a literal entry
	origin policy.Origin
	cred   bool // a credentials.files entry
	// dirs is set for an entry written with a trailing separator
	// (policy.PathRule.TrailingSeparator): as an allow it matches nothing
	// (see regex).
	dirs bool
	// convenience marks a default convenience write root.
	convenience bool
	// pre, when set, names the parameters (separated by spaces) put in
	// front of the entry's allow filter (see keepConvenience).
	pre string
	// text marks the extra reading of a pattern's bracket set as part of
	// a name (see reading).
	text bool
	// twin marks the /private spelling of a path under /tmp, /var or
	// /etc (see private); fold the spelling with ".." folded (see folded).
	twin, fold bool
	// gate, on such a spelling of an allow, is the symbolic path whose
	// existence when srt starts decides whether it applies (see
	// hostGate); pre then holds its parameter.
	gate string
}

func (e entry) glob() bool { return e.pat != "" }

// spelling is the entry as the policy writes it, root included.
func (e entry) spelling() string { return e.root + e.lit + e.pat }

// splitPath divides a policy path into its symbolic root as an entry
// holds it (the marker of policy.Home or policy.Cwd; "" for any other
// root) and the rest: "" or "/..." after a symbolic root, the whole path
// otherwise.
func splitPath(p policy.Path) (root, rest string) {
	switch r := p.Root(); {
	case r != policy.Home && r != policy.Cwd:
		return "", p.String()
	case p.Rel() == "":
		return string(r), ""
	}
	return string(p.Root()), "/" + p.Rel()
}

// split is splitPath of a spelling the emitter made (an entry's, a
// gate's, a path on a host). One that is no policy path (a root's
// parents, "//x" on a host whose HOME is "/") has no symbolic root: it is
// absolute text, as the emitter wrote it.
func split(spelling string) (root, rest string) {
	if p, err := policy.ParsePath(spelling); err == nil {
		return splitPath(p)
	}
	return "", spelling
}

// entryOf is the entry of a policy rule; a literal entry is never a glob.
func entryOf(r policy.PathRule) entry {
	root, rest := splitPath(r.Path)
	e := entry{root: root, origin: r.Origin, cred: strings.HasPrefix(r.Origin.Key, "credentials."), dirs: r.TrailingSeparator, convenience: r.Convenience}
	if r.Pattern && !r.Literal {
		e.pat = rest
	} else {
		e.lit = rest
	}
	return e
}

// entries are the entries of a list of deny rules: each rule's spellings
// (see spellings), then the extra readings of its patterns (see reading),
// after all plain entries, as the reference orders them
// (docs/reference.md#macos-readings).
func entries(rules []policy.PathRule) []entry {
	var out, extra []entry
	for _, r := range rules {
		e := entryOf(r)
		out = append(out, spellings(e)...)
		if x, ok := reading(e); ok {
			extra = append(extra, spellings(x)...)
		}
	}
	return append(out, extra...)
}

// An allowKind is the list an allow comes from: the reference adopts the
// /private spelling of each differently (see hostGate).
type allowKind int

const (
	readAllow   allowKind = iota // filesystem.allowRead
	writeRoot                    // a write root
	socketAllow                  // network.allowUnixSockets
)

// allowEntries are the entries of a list of allow rules: each rule's
// spellings, without the extra reading of a bracket set as text. The
// reference adds that reading only where the name exists when it starts;
// the emitter cannot look, and an allow that always carried it would
// let the command create the name ("[0-9]*") and write under it. An
// allow may only be narrower than the reference's, so it goes.
//
// The /private spelling of an allow under /tmp, /var or /etc is what
// Seatbelt matches, and a spelling with ".." matches only folded; the
// reference has either only where it resolved the path when it started
// (see hostGate). Such a spelling is left out where the reference never
// has it, and otherwise put behind a parameter the runtime sets from
// whether the path exists (see HostDefines). A gated spelling that
// another rule of the list names without condition is not repeated.
//
// dropped are the spellings left out because the reference never grants
// them (see Rule.Dropped).
func (m *emitter) allowEntries(rules []policy.PathRule, k allowKind) (kept, dropped []entry) {
	var out []entry
	for _, r := range rules {
		e := entryOf(r)
		gate, ok := hostGate(e, k)
		for _, x := range spellings(e) {
			if x.twin || x.fold {
				if !ok {
					dropped = append(dropped, x) // the reference never grants it
					continue
				}
				x.gate = gate
			}
			out = append(out, x)
		}
	}
	key := func(x entry) string { return fmt.Sprint(x.spelling(), x.glob(), x.dirs) }
	plain := map[string]bool{}
	for _, x := range out {
		if x.gate == "" {
			plain[key(x)] = true
		}
	}
	kept = out[:0]
	for _, x := range out {
		if x.gate == "" || !plain[key(x)] {
			if x.gate != "" {
				x.pre = m.privateParam(x.gate)
			}
			kept = append(kept, x)
		}
	}
	return kept, dropped
}

// hostGate decides the spellings of allow e (of list k) that the
// reference has only where realpath, when it starts, gives them: the
// /private form of a path under /tmp, /var or /etc, and the folded form
// of a path with "..". ok is false where the reference never has them;
// otherwise gate is the symbolic path whose existence decides.
//
// The reference resolves a write root or a socket path with realpath and
// adopts the result only when it is the path itself (".." folded) or,
// strictly below /tmp or /var, its /private form: never for /etc, nor for
// /tmp or /var themselves; for a pattern, the same holds for the directory
// before its first wildcard. A read allow also gets a second spelling with
// its directory resolved (a pattern's whole base directory), without that
// bound: /etc counts, and a literal allow needs only its directory to
// exist. "Exists" is decided by the runtime as realpath would: see Host.
func hostGate(e entry, k allowKind) (gate string, ok bool) {
	full := e.lit + e.pat
	base := full
	if e.glob() {
		base = entry{pat: full}.base()
	}
	clean := path.Clean(base)
	top := ""
	for _, d := range policy.MacPrivateDirs {
		if e.root == "" && (clean == d || strings.HasPrefix(clean, d+"/")) {
			top = d
		}
	}
	switch {
	case top == "" && !strings.Contains(full+"/", "/../"):
		return "", false // nothing to decide ("/tmp/../opt/x": its twin names no path the kernel checks)
	case top != "" && k != readAllow && (clean == top || top == "/etc"):
		return "", false
	case top != "" && k == readAllow && !e.glob() && clean == top:
		return "", false // its directory is "/": the second spelling is the first
	}
	if k == readAllow && !e.glob() {
		base = full[:strings.LastIndexByte(full, '/')]
	}
	if e.root == "" && base == "" {
		base = "/"
	}
	return e.root + base, true
}

// spellings are e and its other spellings, in this order:
//
//   - an absolute path under /tmp, /var or /etc, which are symlinks into
//     /private on macOS, also as /private/...: Seatbelt matches the path the
//     kernel resolved. The reference gets this by realpath, for paths that
//     exist at run time only (docs/reference.md#macos-pitfalls); the emitter cannot look, so it writes
//     both: a deny then holds for a file created later. For an allow,
//     allowEntries makes the twin depend on the host;
//   - a path or pattern with ".." also folded: Seatbelt never sees "..",
//     and a rule spelled with it would match nothing (the reference only
//     warns about absolute ones, and folds relative ones).
//     The spelling as written is kept, in case the folded one is wrong
//     because of a symlink. The reference folds only by realpath, for
//     paths that exist when it starts: for an allow, allowEntries makes
//     the folded spelling depend on the host.
//
// The folded spelling gets its /private form too: "/tmp/x/../y" is
// "/private/tmp/y" to the kernel, and Seatbelt never sees "/tmp/y".
func spellings(e entry) []entry {
	out := private(e)
	if x, ok := folded(e); ok {
		out = append(out, private(x)...)
	}
	return out
}

// private is e and, for an absolute path under /tmp, /var or /etc, its
// /private form (the twin).
func private(e entry) []entry {
	out := []entry{e}
	if e.root == "" {
		full := e.lit + e.pat
		for _, d := range policy.MacPrivateDirs {
			if full == d || strings.HasPrefix(full, d+"/") {
				x := e
				x.twin = true
				if e.lit != "" {
					x.lit = "/private" + e.lit
				} else {
					x.pat = "/private" + e.pat
				}
				out = append(out, x)
			}
		}
	}
	return out
}

// folded is e with ".." folded, when it has one that stays under its root.
func folded(e entry) (entry, bool) {
	e.fold = true
	if !e.glob() && strings.Contains(e.lit+"/", "/../") {
		x := e
		if e.root == "" {
			x.lit = path.Clean(e.lit) // "/.." is "/", as for the kernel
		} else {
			rel := path.Clean(strings.TrimPrefix(e.lit, "/"))
			if rel == ".." || strings.HasPrefix(rel, "../") {
				// Above the root: the profile cannot name it without the
				// host's directories; srt on macOS refuses such a policy
				// (ClimbingHazard).
				return entry{}, false
			}
			x.lit = "/" + rel
			if rel == "." {
				x.lit = ""
			}
		}
		return x, true
	}
	if e.glob() && e.lit == "" && strings.Contains(e.pat+"/", "/../") {
		x := e
		if e.root == "" {
			x.pat = path.Clean(e.pat)
		} else if rel := path.Clean(strings.TrimPrefix(e.pat, "/")); rel != ".." && !strings.HasPrefix(rel, "../") {
			x.pat = "/" + rel
		} else {
			return entry{}, false // above the root, as for a literal path
		}
		if x.pat != e.pat && strings.ContainsAny(x.pat, "*?[]") {
			return x, true
		}
	}
	return entry{}, false
}

// reading is the extra entry of a pattern whose spelling has a bracket
// set, which may just as well be part of a real name ("[WIP] proj",
// docs/reference.md#macos-readings). The reference adds it only when that name exists on disk; the
// emitter cannot look, so it always adds it: the pattern up to the
// component that holds its last set is read as literal text; the rest, if
// it has wildcards, stays a glob anchored there, otherwise the entry is a
// literal path. Only sets need this: a "*" or "?" matches its own
// character, so a name spelled with one is matched by the pattern already.
func reading(e entry) (entry, bool) {
	if !e.glob() {
		return entry{}, false
	}
	end := policy.LastSetEnd(e.pat)
	if end < 0 {
		return entry{}, false
	}
	if i := strings.IndexByte(e.pat[end:], '/'); i >= 0 {
		end += i
	} else {
		end = len(e.pat)
	}
	x := e
	x.text = true
	x.lit, x.pat = e.lit+e.pat[:end], e.pat[end:]
	if !strings.ContainsAny(x.pat, "*?") && policy.LastSetEnd(x.pat) < 0 {
		x.lit, x.pat = x.lit+x.pat, ""
	}
	return x, true
}

// base is the directory a pattern starts in: the root and literal text,
// and the glob's part before the component of its first wildcard. For a
// literal entry it is the path itself.
func (e entry) base() string {
	if !e.glob() {
		return e.spelling()
	}
	static := e.pat
	if i := strings.IndexAny(static, "*?["); i >= 0 {
		static = static[:i]
	}
	dir := e.root + e.lit + static[:strings.LastIndexByte(static, '/')+1]
	if len(dir) > 1 {
		dir = strings.TrimSuffix(dir, "/")
	}
	if dir == "" {
		dir = "/"
	}
	return dir
}

// A pin is a directory kept from being renamed or removed: a symbolic
// path, or the ancestors of a root, written rootParents+root.
const rootParents = "<parents>"

// ancestors of a symbolic path, nearest first, "/" excluded; above a
// symbolic root they end in the root's parents.
func ancestors(p string) []string {
	root, rest := split(p)
	var out []string
	for rest != "" {
		i := strings.LastIndexByte(rest, '/')
		rest = rest[:i]
		if root == "" && rest == "" {
			break
		}
		out = append(out, root+rest)
	}
	if root != "" {
		out = append(out, rootParents+root)
	}
	return out
}

// A relation between two symbolic paths.
type relation int

const (
	unrelated relation = iota // neither contains the other
	same
	inside   // a is strictly inside b
	contains // b is strictly inside a
	unknown  // a fact of the host: the paths start at different roots
)

// relate compares two symbolic paths (no patterns). "/" contains every
// other path; paths under different roots (${HOME}, ${CWD}, absolute) are
// unknown to each other: where HOME and the working directory are is a fact
// of the host, which the profile does not know.
func relate(a, b string) relation {
	if strings.HasPrefix(a, rootParents) || strings.HasPrefix(b, rootParents) {
		if a == b {
			return same
		}
		return unknown
	}
	switch {
	case a == b:
		return same
	case b == "/":
		return inside
	case a == "/":
		return contains
	}
	ra, _ := split(a)
	rb, _ := split(b)
	switch {
	case ra != rb:
		return unknown
	case strings.HasPrefix(a, b+"/"):
		return inside
	case strings.HasPrefix(b, a+"/"):
		return contains
	}
	return unrelated
}

// goRegexp is the deny (or allow) regex of a pattern entry over symbolic
// paths, with the root read as literal text, for deciding at compile time
// which entries a pattern covers.
func (e entry) goRegexp(deny bool) *regexp.Regexp {
	re := "^" + regexp.QuoteMeta(e.root) + policy.RegexEscape(e.lit) + body(e.pat)
	switch {
	case deny:
		re += "(/.*)?"
	case e.dirs:
		re += "/"
	}
	r, err := compileOnce(re + "$")
	if err != nil {
		return regexp.MustCompile(`^\x00$`) // matches no path; GlobRegex output always compiles (tested)
	}
	return r
}

// compiled caches the regular expressions the emitter compares entries
// with: it compares each deny with every other entry, and compiling the
// deny's expression for each pair cost most of the time of a large
// profile.
var compiled sync.Map // string -> compiledRE

type compiledRE struct {
	r   *regexp.Regexp
	err error
}

// compileOnce is regexp.Compile(re), compiled once per process.
func compileOnce(re string) (*regexp.Regexp, error) {
	if v, ok := compiled.Load(re); ok {
		c := v.(compiledRE)
		return c.r, c.err
	}
	r, err := regexp.Compile(re)
	compiled.Store(re, compiledRE{r, err})
	return r, err
}

// body is the regex of a glob without its anchors.
func body(glob string) string {
	if glob == "" {
		return ""
	}
	re := policy.GlobRegex(glob)
	return re[1 : len(re)-1]
}

// sample is one path the entry names: itself, or a path its glob matches.
func (e entry) sample() string {
	return e.root + e.lit + policy.GlobSample(e.pat)
}

// covers reports whether deny entry d covers entry a (docs/reference.md#macos-reads step 4): for a
// pattern deny, its regex matches a's sample; for a literal deny, a lies
// strictly inside it.
func covers(d, a entry) bool {
	if d.glob() {
		return d.goRegexp(true).MatchString(a.sample())
	}
	if a.glob() {
		r := relate(a.base(), d.spelling())
		return r == inside || r == same
	}
	return relate(a.spelling(), d.spelling()) == inside
}
