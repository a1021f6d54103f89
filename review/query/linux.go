package query

import (
	"fmt"
	"path"
	"strings"

	"srt.dev/compiler/policy"
)

// linux is the bubblewrap sandbox (runtime/resolve, runtime/sandbox):
// everything readable (--ro-bind / /) except what a read deny hides under
// an empty tmpfs or /dev/null; an allowRead naming a deny's unit lifts it,
// an allowRead or write root inside it is bound back; writes only in the
// write roots bound read-write; globs expanded when srt starts.
type linux struct{ *Evaluator }

func (l linux) target() Target { return Linux }

// A linuxRoot is a symbolic root and its directory on the host, "" when
// the options do not name it.
type linuxRoot struct {
	root policy.Root
	dir  string
}

// linuxRoots are the symbolic roots whose patterns linux.covers compares
// in the symbolic form when the options name their directory (group 1 and
// 2 of the index; group 0 is the question as asked).
func (l linux) linuxRoots() [2]linuxRoot {
	return [2]linuxRoot{{policy.Home, l.opts.Home}, {policy.Cwd, l.opts.Cwd}}
}

// keys files a literal rule under its path with the roots filled in, a
// pattern under its base directory in the form covers compares it in.
func (l linux) keys(r policy.PathRule, _ bool) ([]keyed, bool) {
	if !r.Pattern {
		return []keyed{{key: l.expand(r.Path)}}, true
	}
	for i, root := range l.linuxRoots() {
		if root.dir != "" && r.Path.Root() == root.root && r.Path.Rel() != "" {
			return patternKey(i+1, r.Path.String(), 0)
		}
	}
	return patternKey(0, l.expand(r.Path), 0)
}

// forms: the question as asked, and in the symbolic form of each root
// whose directory holds it (see covers).
func (l linux) forms(p string) []string {
	out := []string{p, "", ""}
	if x, ok := asPath(p); ok {
		p = x.String()
	}
	for i, root := range l.linuxRoots() {
		if root.dir == "" {
			continue
		}
		if q, ok := root.root.Within(path.Clean(root.dir), p); ok {
			out[i+1] = q.String()
		}
	}
	return out
}

func (l linux) covers(r policy.PathRule, p string) bool {
	if r.Pattern {
		// The directory behind ${HOME} or ${CWD} is a name, whatever its
		// characters (the resolve step walks it as it is): compare in
		// the symbolic form, where the root holds no metacharacter.
		for _, root := range l.linuxRoots() {
			if root.dir == "" || r.Path.Root() != root.root || r.Path.Rel() == "" {
				continue
			}
			x, ok := asPath(p)
			if !ok {
				return false
			}
			q, ok := root.root.Within(path.Clean(root.dir), x.String())
			if !ok {
				return false // a pattern under the root covers nothing outside it
			}
			return r.Covers(q)
		}
	}
	rp, ok := asPath(l.expand(r.Path))
	q, qok := asPath(p)
	if !ok || !qok {
		return false
	}
	r.Path = rp
	return r.Covers(q)
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
	allows := l.p.Filesystem.AllowRead
	for _, i := range covering(l, allows, unit, false) {
		if a := allows[i]; l.names(a, unit) {
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

func (l linux) write(p string) Decision {
	fs := &l.p.Filesystem
	if fs.Disabled {
		if m, ok := firstCovering(l, fs.CredentialMasks, p); ok {
			return Decision{Rule: m.Origin, Why: "credential mask: the masked copy is bound read-only"}
		}
		return l.disabled()
	}
	if d, ok := writeDenied(l, fs.DenyWrite, p); ok {
		return d
	}
	if d, ok := l.mandatoryBelow(p); ok {
		return d
	}
	if l.inPrivateTmp(p) {
		return Decision{Allow: true, Rule: policy.Default, Why: "writable, but never the host's " + policy.TmpDir + ": " + privateTmpWhy}
	}
	if m, ok := firstCovering(l, fs.CredentialMasks, p); ok {
		return Decision{Rule: m.Origin, Why: "credential mask: the masked copy is bound read-only"}
	}
	root, ok := firstCovering(l, fs.AllowWrite, p)
	if !ok {
		return Decision{Rule: policy.Default, Why: noWriteRootWhy}
	}
	// A read deny is an empty tmpfs or /dev/null, so writes never reach
	// the host, unless a write root at or inside the deny restores it.
	if hiding := l.hiddenFromWrite(l, p); hiding != nil {
		return Decision{Rule: hiding.Origin, Why: "hidden by a read deny: writes land in an empty tmpfs (or /dev/null) and never reach the host"}
	}
	if _, ok := firstCovering(l, l.gitHostRules(), p); ok {
		return Decision{Rule: policy.Mandatory, Why: linuxGitHostWhy}
	}
	why := rootWhy(root)
	switch {
	case root.Pattern:
		why += " (a glob: expanded when srt starts)"
	case root.Path.Under(policy.Abs.Join("dev")):
		if !bwrapDevices[strings.TrimPrefix(p, "/dev/")] {
			return Decision{Rule: root.Origin, Why: "not a device of the sandbox's /dev (bubblewrap's --dev makes its own, with null, zero, full, random, urandom, tty, ptmx and the std streams): what is written there stays in the sandbox"}
		}
		why += " (the sandbox's own /dev, which bubblewrap's --dev makes; writes to a device reach that device)"
	case root.Path != policy.Cwd.Path() && root.Path != policy.Home.Path():
		// The resolve step binds a write root only if it exists.
		why += "; only if " + root.Path.String() + " exists when srt starts (bubblewrap binds existing paths only; one created later stays read-only)"
	}
	return Decision{Allow: true, Rule: root.Origin, Why: why}
}

// linuxGitHostWhy says how Linux protects git's files outside the
// repository (runtime/resolve/githost.go, the check after the run).
const linuxGitHostWhy = "git's configuration outside the repository (or gitk's start-up file), whatever the settings say: " +
	"bound read-only where it exists when srt starts; made or changed during the run anyway, or reached through a link put on the way, " +
	"it is moved to the quarantine when the run ends; so are $XDG_CONFIG_HOME/git/config, $GIT_CONFIG_GLOBAL, $GIT_CONFIG_SYSTEM " +
	"and every file these include, as srt's environment names them"

// bwrapDevices are the names below /dev that bubblewrap's --dev provides.
var bwrapDevices = map[string]bool{
	"null": true, "zero": true, "full": true, "random": true, "urandom": true, "tty": true,
	"ptmx": true, "stdin": true, "stdout": true, "stderr": true,
}

// mandatoryBelow reports the mandatory deny that protects p below the
// working directory: what the start-up scan finds, to
// mandatoryDenySearchDepth, outside node_modules, and existing names only
// (asked with Options.Exists; without it the name is assumed to exist).
func (l linux) mandatoryBelow(p string) (Decision, bool) {
	scan := l.p.Filesystem.MandatoryScan
	if scan == nil {
		return Decision{}, false
	}
	for c := range l.protectedNames(p, scan) {
		if c.inNodeModules {
			break // the scan does not search node_modules
		}
		found := c.level <= c.limit && (!c.file || c.end == c.n)
		if found && l.opts.Exists != nil {
			// The scan finds only what exists when srt starts.
			found = l.opts.Exists(c.name())
		}
		if found {
			return Decision{Rule: scan.Origin, Why: "mandatory write deny found by the start-up scan (to mandatoryDenySearchDepth), if the name exists when srt starts: one created later is writable"}, true
		}
	}
	return Decision{}, false
}

func (l linux) remove(p string) Decision { return l.write(p) }

func (l linux) unixSocket(string) Decision {
	if l.p.Network.AllowAllUnixSockets {
		return Decision{Allow: true, Rule: l.switchOrigin("network.allowAllUnixSockets"), Why: "no seccomp unix filter: every unix socket the file system lets it reach"}
	}
	return Decision{Rule: policy.Default, Why: "seccomp refuses socket(AF_UNIX): Linux cannot filter by path, so allowUnixSockets does not apply"}
}

func (l linux) trailingSeparator() string {
	return "written with a trailing /: Linux drops it and grants each match (file or directory) with its contents, expanded when srt starts"
}

func (l linux) everything() string { return "/" }

// extraWrites: the private TMPDIR, which no rule names.
func (l linux) extraWrites() []Line {
	if !l.p.Filesystem.PrivateTmp() {
		return nil
	}
	return []Line{{Subject: policy.TmpDir + " (TMPDIR)", Decision: l.write(policy.TmpDir)}}
}

// listsWrite: not the default /tmp names while the TMPDIR line stands for
// them (the plan binds neither name).
func (l linux) listsWrite(r policy.PathRule) bool {
	return !(r.Origin == policy.Default && l.p.Filesystem.PrivateTmp() && (r.Path.String() == policy.TmpDir || r.Path.String() == "/private"+policy.TmpDir))
}

func (l linux) mandatoryBelowWhy() (string, bool) {
	return fmt.Sprintf(", and below it where the start-up scan finds them (depth %d)", l.p.Filesystem.MandatoryScan.Depth), true
}

func (l linux) knobs() []knob {
	pr := &l.p.Process
	// allowLocalBinding is ignored on Linux (docs/reference.md#seccomp): the
	// sandbox's private loopback is always usable, and reaches
	// nothing outside it.
	out := []knob{
		l.sw("nested user namespaces", "allowNestedUserNamespaces", pr.AllowNestedUserNamespaces, "the seccomp namespaces filter is off: setns, mount, unshare(CLONE_NEWUSER) work", "refused by the seccomp namespaces filter"),
		l.sw("weaker nested sandbox", "enableWeakerNestedSandbox", pr.EnableWeakerNestedSandbox, "bubblewrap runs without a fresh /proc (for running inside a container)", "a fresh /proc"),
		{localBindingName, Decision{Allow: true, Rule: policy.Default, Why: "always, on the sandbox's own loopback (private network namespace; allowLocalBinding is ignored on Linux); " + l.hostLoopbackWhy()}},
	}
	out = append(out, l.landlockKnob())
	return append(out, linuxKernelKnobs()...)
}

// landlockKnob is the line of the second layer (policy.Landlock).
func (l linux) landlockKnob() knob {
	const name = "second layer (Landlock)"
	grants := l.p.Landlock()
	if grants == nil {
		return knob{name, Decision{Allow: true, Rule: l.switchOrigin("filesystem.disabled"), Why: "none: the file system policy is disabled, everything is writable"}}
	}
	var paths []string
	for _, g := range grants {
		paths = append(paths, g.Path)
	}
	return knob{name, Decision{Rule: policy.Mandatory, Why: "where the kernel has Landlock (srt doctor), the command can write only below its write roots, its TMPDIR, " +
		strings.Join(paths, " ") + " and the files its standard output and error are open on, whatever the mounts allow; " +
		"the plan names these write roots on lines of their own (@landlock-write), and srt refuses, on any kernel, a plan whose writable binds reach beyond them; " +
		"Landlock cannot carve an exception out of a grant, so the write denies inside the write roots rest on the mounts alone; " +
		"abstract Unix sockets and signals stay inside the sandbox (" + strings.Join(policy.LandlockScopes, ", ") + " scopes, Landlock ABI 6)"}}
}

// linuxKernelKnobs are the protections of the host kernel that every Linux
// sandbox has, whatever the settings say.
func linuxKernelKnobs() []knob {
	var ro, hidden, ns []string
	for _, k := range policy.KernelPaths {
		if k.Mask {
			hidden = append(hidden, k.Path)
		} else {
			ro = append(ro, k.Path)
		}
	}
	for _, n := range policy.Namespaces {
		ns = append(ns, strings.ToUpper(strings.TrimSuffix(strings.TrimPrefix(n.Arg, "--unshare-"), "-try")))
	}
	return []knob{
		{"kernel interfaces", Decision{Rule: policy.Mandatory, Why: "always read-only: " + strings.Join(ro, " ") +
			" (a root caller's sandbox could otherwise set host sysctls such as kernel.core_pattern); always hidden where the kernel has them: " + strings.Join(hidden, " ")}},
		{"kernel keyrings", Decision{Rule: policy.Mandatory, Why: "keyctl, add_key and request_key fail with EPERM (seccomp): the caller's session keyring is neither readable nor writable"}},
		{"private namespaces", Decision{Rule: policy.Mandatory, Why: "always its own " + strings.Join(ns, ", ") + " namespaces (cgroup where the kernel has them), besides mount, user, PID and network: no System V IPC, message queue or host name is shared with the host"}},
	}
}
