package query

import (
	"path"
	"strings"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
)

// linux is the bubblewrap sandbox (runtime/resolve, runtime/sandbox):
// everything readable (--ro-bind / /) except what a read deny hides under
// an empty tmpfs or /dev/null; an allowRead naming a deny's unit lifts it,
// an allowRead or write root inside it is bound back; writes only in the
// write roots bound read-write; globs expanded when srt starts.
type linux struct{ *Evaluator }

func (l linux) covers(r policy.PathRule, p string) bool {
	if r.Pattern {
		// The directory behind ${HOME} or ${CWD} is a name, whatever its
		// characters (the resolve step walks it as it is): compare in
		// the symbolic form, where the root holds no metacharacter.
		for _, root := range []struct{ sym, dir string }{{policy.Home, l.opts.Home}, {policy.Cwd, l.opts.Cwd}} {
			if root.dir == "" || !strings.HasPrefix(r.Path, root.sym+"/") {
				continue
			}
			dir := path.Clean(root.dir)
			rel, ok := strings.CutPrefix(p, dir)
			if dir == "/" {
				rel, ok = p, true
			}
			if !ok || rel != "" && rel[0] != '/' {
				return false // a pattern under the root covers nothing outside it
			}
			return compiler.Covers(r, root.sym+rel)
		}
	}
	r.Path = l.expand(r.Path)
	return compiler.Covers(r, p)
}

func (l linux) credentialRead(m policy.PathRule) Decision {
	why := "credential mask: the command reads a copy"
	if m.Mask != nil {
		why += " showing " + MaskedPart(*m.Mask, true)
	}
	return Decision{Allow: true, Rule: m.Origin, Why: why}
}

func (l linux) read(p string) Decision {
	if l.inPrivateTmp(p) {
		return Decision{Rule: policy.Default, Why: "the host's " + policy.TmpDir + " is hidden: " + privateTmpWhy}
	}
	return l.readLayered(l, p)
}

// inPrivateTmp reports whether p is policy.TmpDir or below it while the
// policy gives each run its own TMPDIR there.
func (l linux) inPrivateTmp(p string) bool {
	return l.p.Filesystem.PrivateTmp() && (p == policy.TmpDir || strictlyInside(p, policy.TmpDir))
}

// privateTmpWhy explains the Linux answers at and below policy.TmpDir.
const privateTmpWhy = "the command's TMPDIR, a new, empty directory of each run mounted there, which no other run sees and which is removed when the run ends"

// unit is the shallowest ancestor of p (or p) that read deny d names:
// the directory the tmpfs is mounted on.
func (l linux) unit(d policy.PathRule, p string) string {
	var anc []string
	for a := p; a != ""; a = linuxDir(a) {
		anc = append(anc, a)
	}
	for i := len(anc) - 1; i >= 0; i-- {
		if l.names(d, anc[i]) {
			return anc[i]
		}
	}
	return p
}

// restores: the resolve step binds a grant strictly inside a deny's unit
// back over the tmpfs.
func (l linux) restores(a policy.PathRule, p, unit string) bool {
	return strictlyInside(l.expand(a.Path), unit)
}

// lifter returns the allowRead that names the unit itself, which lifts
// the deny entirely (nothing is mounted over it).
func (l linux) lifter(unit string) (policy.PathRule, bool) {
	for _, a := range l.p.Filesystem.AllowRead {
		if l.names(a, unit) {
			return a, true
		}
	}
	return policy.PathRule{}, false
}

// sealed: on Linux a credential deny is reopened like any other.
func (l linux) sealed(policy.PathRule) bool { return false }

func (l linux) denyWhy(d policy.PathRule) string {
	why := "hidden by a read deny"
	if d.Pattern {
		why += " (a glob: expanded when srt starts; files created later are not covered)"
	}
	return why
}

func (l linux) readableWhy() string { return "everything is readable unless a read deny hides it" }

// names reports whether rule r names x itself (not an ancestor of x).
func (l linux) names(r policy.PathRule, x string) bool {
	if !l.covers(r, x) {
		return false
	}
	dir := linuxDir(x)
	return dir == "" || !l.covers(r, dir) || l.expand(r.Path) == x
}

// linuxDir returns the directory holding p, or "" when p is a root.
func linuxDir(p string) string {
	if p == "/" || p == "." {
		return ""
	}
	return path.Dir(p)
}
