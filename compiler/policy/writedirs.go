package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A WriteDir is one allowWrite entry the settings wrote (the defaults are
// not listed), read for one host: the directory it names, and whether srt
// creates that directory when it does not exist.
//
// On Linux an allowWrite entry is a bind mount, and bubblewrap cannot
// mount what does not exist: without the directory, the command could not
// write it, nor create it (its parent is read-only). A user who allowed
// ~/.npm on a machine without one yet expects npm to be able to create
// and write it, so srt creates it, as the user, before the run, under the
// home or the working directory, where nothing the policy protects lies
// in the way.
type WriteDir struct {
	Rule PathRule
	// Path is the entry with HOME and CWD filled in, clean.
	Path string
	// Root is the home or working directory Path lies strictly below,
	// where srt starts creating it (the deeper of the two when both hold
	// it); "" when Path lies below neither.
	Root string
	// Create says that srt creates Path (a directory, and its missing
	// parents below Root) when it does not exist; otherwise Why says why
	// not.
	Create bool
	Why    string
}

// ExecDirs are directories on a usual PATH and the shell and session
// start-up directories: a file written there runs later, outside the
// sandbox. srtc lint reports an allowWrite of one (SRT103), and srt never
// creates one.
var ExecDirs = []Path{
	Abs.Join("bin"), Abs.Join("sbin"), Abs.Join("usr/bin"), Abs.Join("usr/sbin"), Abs.Join("usr/local/bin"), Abs.Join("usr/local/sbin"), Abs.Join("opt/homebrew/bin"),
	Abs.Join("etc/profile.d"), Abs.Join("etc/bash_completion.d"),
	Home.Join("bin"), Home.Join(".local/bin"), Home.Join("go/bin"), Home.Join(".cargo/bin"),
	Home.Join(".npm-global/bin"), Home.Join(".bun/bin"), Home.Join(".deno/bin"),
	Home.Join(".config/fish"), Home.Join(".oh-my-zsh"), Home.Join(".bashrc.d"), Home.Join(".zshrc.d"),
	Home.Join(".config/environment.d"), Home.Join(".config/autostart"), Home.Join(".config/systemd/user"),
	Home.Join("Library/LaunchAgents"),
}

// WriteDirs lists the allowWrite entries the settings wrote, without
// glob characters, for the home and working directories home and cwd
// (absolute). Nothing is listed when the file-system policy is off.
func WriteDirs(p *Policy, home, cwd string) []WriteDir {
	fs := &p.Filesystem
	if fs.Disabled || home == "" || cwd == "" {
		return nil
	}
	expand := expander(home, cwd)
	denies := [2]*denyIndex{newDenyIndex(fs.DenyWrite, expand), newDenyIndex(fs.DenyRead, expand)}
	var out []WriteDir
	for _, r := range fs.AllowWrite {
		if r.Origin == Default || r.Origin == Mandatory || r.Pattern {
			continue
		}
		raw := expand(r.Path)
		d := WriteDir{Rule: r, Path: path.Clean(raw)}
		for _, root := range []string{cwd, home} {
			if below(d.Path, path.Clean(root)) && len(root) > len(d.Root) {
				d.Root = path.Clean(root)
			}
		}
		d.Why = whyNotCreate(denies, raw, d, expand)
		d.Create = d.Why == ""
		out = append(out, d)
	}
	return out
}

// whyNotCreate says why srt does not create d, or "". denies are the
// denyWrite and denyRead rules.
func whyNotCreate(denies [2]*denyIndex, raw string, d WriteDir, expand func(Path) string) string {
	if strings.Contains("/"+raw+"/", "/../") {
		return "it is spelled with .."
	}
	if d.Root == "" {
		return "srt creates only directories below the home and working directories"
	}
	for _, x := range ExecDirs {
		if e := path.Clean(expand(x)); d.Path == e || below(d.Path, e) {
			return "programs there run outside the sandbox (" + e + "); create it yourself if that is meant"
		}
	}
	for _, name := range append(append([]string{".git"}, MandatoryFiles...), MandatoryDirs...) {
		if strings.Contains(strings.TrimPrefix(d.Path, d.Root)+"/", "/"+name+"/") {
			return "its name is one srt protects (" + name + ")"
		}
	}
	for i, which := range []string{"denyWrite", "denyRead"} {
		if r, ok := denies[i].first(d.Path); ok {
			return "a " + which + " entry (" + r.Origin.Key + ") covers it"
		}
	}
	return ""
}

// A denyIndex finds the first of a list of deny rules that covers a path
// (see covers) among the rules that can: a literal rule whose path is the
// path or an ancestor, a pattern whose base directory (before its first
// wildcard) is; patterns without an absolute base are always tried. Each
// is then asked with covers, in the order of the list, so the answer is
// that of a reading of every rule (TestWriteDirsIndexAgrees).
type denyIndex struct {
	rules  []PathRule
	paths  []string         // each rule's path, expanded
	pieces [][]string       // literal texts every path a pattern matches holds
	by     map[string][]int // rules by cleaned path (literal) or base directory (pattern)
	loose  []int            // patterns without an absolute base
}

func newDenyIndex(rules []PathRule, expand func(Path) string) *denyIndex {
	x := &denyIndex{rules: rules, paths: make([]string, len(rules)), pieces: make([][]string, len(rules)), by: map[string][]int{}}
	for i, r := range rules {
		rp := expand(r.Path)
		x.paths[i] = rp
		if r.Pattern {
			x.pieces[i] = LiteralPieces(rp)
		}
		if !r.Pattern {
			x.by[path.Clean(rp)] = append(x.by[path.Clean(rp)], i)
			continue
		}
		ds := Doublestar(rp)
		static := ds
		if j := strings.IndexAny(ds, "*?[{\\"); j >= 0 {
			static = ds[:j]
		}
		j := strings.LastIndexByte(static, '/')
		if !strings.HasPrefix(static, "/") || j < 0 {
			x.loose = append(x.loose, i)
			continue
		}
		base := static[:j]
		if base == "" {
			base = "/"
		}
		x.by[base] = append(x.by[base], i)
	}
	return x
}

// first is the first rule that covers p, an absolute clean path.
func (x *denyIndex) first(p string) (PathRule, bool) {
	cand := append([]int(nil), x.loose...)
	for a := p; ; a = path.Dir(a) {
		cand = append(cand, x.by[a]...)
		if a == "/" || a == "." || a == "" {
			break
		}
	}
	slices.Sort(cand)
next:
	for _, i := range cand {
		for _, piece := range x.pieces[i] {
			if !strings.Contains(p, piece) {
				continue next // nor does any ancestor of p hold it
			}
		}
		if covers(x.rules[i], x.paths[i], p) {
			return x.rules[i], true
		}
	}
	return PathRule{}, false
}

// LiteralPieces are the runs of glob between separators, wildcards and
// bracket sets, which every path it matches holds (a bracket is skipped
// up to the next "]": the text of an invalid set, literal, is left out).
func LiteralPieces(glob string) []string {
	var out []string
	start := -1
	flush := func(i int) {
		if start >= 0 && i > start {
			out = append(out, glob[start:i])
		}
		start = -1
	}
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '*', '?', '/', ']':
			flush(i)
		case '[':
			flush(i)
			if end := strings.IndexByte(glob[i+1:], ']'); end >= 0 {
				i += end + 1
			} else {
				i = len(glob)
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(glob))
	return out
}

// covers reports whether rule r, its path expanded to rp, names p or an
// ancestor of p.
func covers(r PathRule, rp, p string) bool {
	var ds string
	if r.Pattern {
		ds = Doublestar(rp)
	}
	for a := p; ; a = path.Dir(a) {
		if !r.Pattern && path.Clean(rp) == a {
			return true
		}
		if r.Pattern {
			if ok, err := doublestar.Match(ds, a); err == nil && ok {
				return true
			}
		}
		if a == "/" {
			return false
		}
	}
}

// below reports whether p lies strictly below dir.
func below(p, dir string) bool {
	return dir == "/" && p != "/" || strings.HasPrefix(p, dir+"/")
}

// CwdHidden returns the denyRead entry that hides the working directory
// cwd (bubblewrap then cannot enter it, and the command cannot start), if
// one does: an entry at or above cwd that no allowRead entry at or below
// it opens again (a glob-free entry; globs are expanded on the host). ok
// is false when cwd stays readable, or the file-system policy is off.
func CwdHidden(p *Policy, home, cwd string) (deny PathRule, ok bool) {
	fs := &p.Filesystem
	if fs.Disabled || home == "" || cwd == "" {
		return PathRule{}, false
	}
	expand := func(p Path) string { return path.Clean(expander(home, cwd)(p)) }
	cwd = path.Clean(cwd)
	atOrBelow := func(p, dir string) bool { return p == dir || below(p, dir) }
	for _, d := range fs.DenyRead {
		dp := expand(d.Path)
		if d.Pattern || !atOrBelow(cwd, dp) {
			continue
		}
		opened := false
		for _, a := range fs.AllowRead {
			if ap := expand(a.Path); !a.Pattern && atOrBelow(cwd, ap) && atOrBelow(ap, dp) {
				opened = true
			}
		}
		if !opened {
			return d, true
		}
	}
	return PathRule{}, false
}

// expander fills in the symbolic roots of a rule's path, home and cwd
// both known. A root of the Windows reading stays as it is spelled: its
// path then lies below neither directory, and is never created.
func expander(home, cwd string) func(Path) string {
	return func(p Path) string {
		if s, ok := p.Expand(home, cwd); ok {
			return s
		}
		return p.String()
	}
}
