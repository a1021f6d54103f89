package seatbelt

// Hazards: policies the profile cannot express on a given host, which srt
// on macOS refuses to run rather than run with a rule that matches
// nothing. They are pure checks of the policy against the host's
// directories, beside Host.Check.

import (
	"fmt"
	"path"
	"strings"

	"srt.dev/compiler/policy"
)

// CrossRootHazard reports a read deny that the macOS profile cannot order
// correctly on this host: a literal deny written under one root (${HOME},
// ${CWD} or "/") that lies strictly inside a literal read allow written
// under another. The profile is compiled without knowing where HOME and
// the working directory are, so it does not re-apply such a deny after
// the allow, and the allow would open it (e.g. denyRead ~/.ssh with
// allowRead "." run from /Users). srt refuses to run rather than expose it.
func CrossRootHazard(p *policy.Policy, home, cwd string) error {
	for _, d := range p.Filesystem.DenyRead {
		if d.Pattern || strings.HasPrefix(d.Origin.Key, "credentials.") {
			continue
		}
		for _, a := range p.Filesystem.AllowRead {
			if a.Pattern || a.Path.Root() == d.Path.Root() {
				continue
			}
			dx, dok := d.Path.Expand(home, cwd)
			ax, aok := a.Path.Expand(home, cwd)
			if !dok || !aok {
				return fmt.Errorf("%s (%s) and %s (%s) start at different roots, and without the home and working directories (%q, %q) srt cannot tell whether the macOS profile keeps the deny", d.Origin.Key, d.Path, a.Origin.Key, a.Path, home, cwd)
			}
			dp, ap := kernelPath(dx), kernelPath(ax)
			if ap == "/" && dp != "/" || strings.HasPrefix(dp, ap+"/") {
				return fmt.Errorf("%s (%s) lies inside %s (%s) on this host, and the macOS profile cannot keep a deny inside an allow written from another root: write both from the same root (e.g. both absolute), or run from another directory", d.Origin.Key, dp, a.Origin.Key, ap)
			}
		}
	}
	return nil
}

// kernelPath is p as Seatbelt compares it: ".." folded, and /tmp, /var
// and /etc, symlinks into /private on macOS, in their /private form. A
// working directory under /private/tmp meets a rule on /tmp only there.
func kernelPath(p string) string {
	return policy.MacKernelPath(path.Clean(p))
}

// ClimbingHazard reports a path of the policy that climbs above its
// symbolic root ("../secrets", written relative to the working directory).
// The macOS profile names paths from ${HOME} and ${CWD} without knowing the
// host, so it cannot name their parents' other children: the rule would
// match nothing, a deny would protect nothing. srt on macOS refuses to run
// it; an absolute path says the same thing safely.
func ClimbingHazard(p *policy.Policy) error {
	fs := p.Filesystem
	lists := [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Network.AllowUnixSockets}
	for _, list := range lists {
		for _, r := range list {
			if root := r.Path.Root(); root != policy.Home && root != policy.Cwd {
				continue
			}
			if c := path.Clean(r.Path.Rel()); c == ".." || strings.HasPrefix(c, "../") {
				return fmt.Errorf("%s: %s climbs above %s, which the macOS profile cannot express without this host's directories: write it as an absolute path", r.Origin.Key, r.Path, r.Path.Root())
			}
		}
	}
	return nil
}
