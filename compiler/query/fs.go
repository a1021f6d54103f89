package query

import (
	"slices"
	"strings"

	"srt.dev/compiler/policy"
)

// Read answers whether the command can read the host's content at p (a
// path as Path returns it) on target t.
func (e *Evaluator) Read(p string, t Target) Decision {
	pl := e.on(t)
	fs := &e.p.Filesystem
	if m, ok := firstCovering(pl, fs.CredentialMasks, p); ok {
		return pl.credentialRead(m)
	}
	if fs.Disabled {
		return Decision{Allow: true, Rule: e.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled"}
	}
	return pl.read(p)
}

// strictlyInside reports whether a lies below dir.
func strictlyInside(a, dir string) bool {
	if strings.HasSuffix(dir, "/") { // "/", or a drive root "c:/"
		return a != dir && strings.HasPrefix(a, dir)
	}
	return strings.HasPrefix(a, dir+"/")
}

// userWriteRoots are the allowWrite rules the settings wrote.
func (e *Evaluator) userWriteRoots() []policy.PathRule {
	var out []policy.PathRule
	for _, r := range e.p.Filesystem.AllowWrite {
		if r.Origin != policy.Default {
			out = append(out, r)
		}
	}
	return out
}

// Write answers whether the command can change the host's file at p (a
// path as Path returns it) on target t: create, modify or remove it, with
// the change reaching the host.
func (e *Evaluator) Write(p string, t Target) Decision {
	fs := &e.p.Filesystem
	if fs.Disabled {
		if m, ok := e.firstCoveringOn(fs.CredentialMasks, p, t); ok && t == Linux {
			return Decision{Rule: m.Origin, Why: "credential mask: the masked copy is bound read-only"}
		}
		if t == Windows {
			// The command still runs under the write-restricted token,
			// with no write root: nothing the settings name is writable
			// (docs/reference.md#windows-token, docs/reference.md#windows-cases W21).
			return Decision{Rule: e.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled, which on Windows means no write roots: the write-restricted token writes only where a root's grant names it (and in the sandbox account's own profile)"}
		}
		return Decision{Allow: true, Rule: e.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled"}
	}
	if d, ok := e.firstCoveringOn(e.writeDenies(t), p, t); ok {
		why := "write deny: wins over allowWrite, even at or above a write root"
		if d.Origin == policy.Mandatory {
			why = "mandatory write deny (shell start-up files, git and editor configuration, agent commands)"
		}
		return Decision{Rule: d.Origin, Why: why}
	}
	if d, ok := e.mandatoryBelow(p, t); ok {
		return d
	}
	if t == Linux && fs.PrivateTmp() && (p == policy.TmpDir || strictlyInside(p, policy.TmpDir)) {
		return Decision{Allow: true, Rule: policy.Default, Why: "writable, but never the host's " + policy.TmpDir + ": " + privateTmpWhy}
	}
	if m, ok := e.firstCoveringOn(fs.CredentialMasks, p, t); ok {
		if t == Linux {
			return Decision{Rule: m.Origin, Why: "credential mask: the masked copy is bound read-only"}
		}
		if t == Windows {
			return Decision{Rule: m.Origin, Why: "credential file: a deny ACE of full access"}
		}
	}
	var root *policy.PathRule
	for _, a := range fs.AllowWrite {
		if t == MacOS && e.macDropped(a) {
			continue
		}
		if t == Windows && a.Origin == policy.Default {
			continue // the default write paths are /dev and /tmp names
		}
		if t == MacOS && e.macAllows(a, p, macWrites) || t != MacOS && e.covers(a, p, t) {
			// macOS: a pattern root allows its exact matches only.
			gated := t == MacOS && e.macGateWhy(a, macWrites) != ""
			if root == nil || !gated && t == MacOS {
				root = &a
			}
			if !gated {
				break // on macOS, one that holds whatever exists wins
			}
		}
	}
	if root == nil {
		why := "nothing is writable unless allowWrite grants it"
		if t == MacOS {
			why += e.macNotHeld(e.macWriteRoots(), p, macWrites)
		}
		return Decision{Rule: policy.Default, Why: why}
	}
	if t != MacOS {
		// Linux: a read deny is an empty tmpfs or /dev/null, so writes
		// never reach the host. Windows: a deny ACE of full access, writes
		// included (the stricter reading; not verified on Windows). Both
		// restore a write root at or inside the deny.
		if hiding := e.hiddenFromWrite(e.on(t).(layered), p); hiding != nil {
			why := "hidden by a read deny: writes land in an empty tmpfs (or /dev/null) and never reach the host"
			if t == Windows {
				why = "a read deny is a deny ACE of full access, writes included (the stricter reading; not verified on Windows)"
			}
			return Decision{Rule: hiding.Origin, Why: why}
		}
	}
	why := "inside a write root"
	if root.Convenience {
		why = "a default convenience directory, writable unless a read deny hides it"
	} else if root.Origin == policy.Default {
		why = "a default writable path"
	}
	switch {
	case t == MacOS:
		why += e.macGateWhy(*root, macWrites)
	case t != Linux:
	case root.Pattern:
		why += " (a glob: expanded when srt starts)"
	case root.Path == "/dev" || strings.HasPrefix(root.Path, "/dev/"):
		if !bwrapDevices[strings.TrimPrefix(p, "/dev/")] {
			return Decision{Rule: root.Origin, Why: "not a device of the sandbox's /dev (bubblewrap's --dev makes its own, with null, zero, full, random, urandom, tty, ptmx and the std streams): what is written there stays in the sandbox"}
		}
		why += " (the sandbox's own /dev, which bubblewrap's --dev makes; writes to a device reach that device)"
	case root.Path != policy.Cwd && root.Path != policy.Home:
		// The resolve step binds a write root only if it exists.
		why += "; only if " + root.Path + " exists when srt starts (bubblewrap binds existing paths only; one created later stays read-only)"
	}
	if t == MacOS && e.macDeepProtectedDir(p) {
		why += "; a protected directory below the working directory: what is inside it may not be written, but the directory itself may be created, renamed or removed (the profile's CWD/**/NAME/**, docs/reference.md#mandatory-denies)"
	}
	if t == Windows && e.dangerousName(p) {
		why += "; Windows has no mandatory write denies (list it in filesystem.denyWrite)"
	}
	return Decision{Allow: true, Rule: root.Origin, Why: why}
}

// macDeepProtectedDir reports whether p is itself a mandatory directory
// (.vscode, .idea, .git/hooks, .claude/commands, .claude/agents) deeper
// than directly in the working directory, which macOS protects only
// inside.
func (e *Evaluator) macDeepProtectedDir(p string) bool {
	cwd := e.expand(policy.Cwd)
	rest, ok := strings.CutPrefix(p, cwd+"/")
	if !ok || e.p.Filesystem.MandatoryScan == nil {
		return false
	}
	segs := strings.Split(rest, "/")
	n := len(segs)
	last := segs[n-1]
	switch {
	case n >= 2 && (last == ".vscode" || last == ".idea"):
		return true
	case n >= 3 && (segs[n-2] == ".git" && last == "hooks" || segs[n-2] == ".claude" && (last == "commands" || last == "agents")):
		return true
	}
	return false
}

// mandatoryBelow reports the mandatory deny that protects p below the
// working directory: on Linux what the start-up scan finds (to
// mandatoryDenySearchDepth, existing names only), on macOS any depth (the
// profile's regexes also cover names created later). Windows has none
// (see writeDenies).
func (e *Evaluator) mandatoryBelow(p string, t Target) (Decision, bool) {
	scan := e.p.Filesystem.MandatoryScan
	if scan == nil || t == Windows {
		return Decision{}, false
	}
	cwd := e.expand(policy.Cwd)
	if !strings.HasPrefix(p, cwd+"/") {
		return Decision{}, false
	}
	segs := strings.Split(strings.TrimPrefix(p, cwd+"/"), "/")
	depthOK := func(parentLevel, limit int) bool { return t == MacOS || parentLevel <= limit }
	for i, s := range segs {
		if s == "node_modules" && t == Linux {
			break // the scan does not search node_modules
		}
		// s is at level i+1; its parent directory at level i.
		dangerous := false
		switch {
		case s == ".git" && i+1 < len(segs) && slices.Contains(gitFiles(scan), segs[i+1]):
			dangerous = depthOK(i, scan.Depth-2)
		case s == ".git" && i+1 < len(segs) && slices.Contains(gitDirs(scan), segs[i+1]):
			dangerous = depthOK(i, scan.Depth-2) && macDirBelow(t, i, i+2, len(segs))
		case s == ".vscode" || s == ".idea":
			dangerous = depthOK(i, scan.Depth-2) && macDirBelow(t, i, i+1, len(segs))
		case s == ".claude" && i+1 < len(segs) && (segs[i+1] == "commands" || segs[i+1] == "agents"):
			dangerous = depthOK(i, scan.Depth-2) && macDirBelow(t, i, i+2, len(segs))
		case i == len(segs)-1 || t == MacOS:
			for _, f := range scan.Files {
				if s == f {
					dangerous = depthOK(i, scan.Depth-1)
				}
			}
		}
		if dangerous && t == Linux && e.opts.Exists != nil {
			name := cwd + "/" + strings.Join(segs[:i+1], "/")
			if s == ".git" || s == ".claude" {
				name += "/" + segs[i+1]
			}
			// The scan finds only what exists when srt starts.
			dangerous = e.opts.Exists(name)
		}
		if dangerous {
			why := "mandatory write deny below the working directory (any depth, names created later too)"
			if t == Linux {
				why = "mandatory write deny found by the start-up scan (to mandatoryDenySearchDepth), if the name exists when srt starts: one created later is writable"
			}
			return Decision{Rule: scan.Origin, Why: why}, true
		}
	}
	return Decision{}, false
}

// macDirBelow reports whether a protected directory whose name ends at
// segment end (its parent at level i) covers a path of n segments on t.
// macOS protects one directly in the working directory with a subpath, and
// one deeper with the pattern CWD/**/NAME/** (docs/reference.md#mandatory-denies), which matches
// what is inside it, not the directory itself: a deeper .vscode may be
// created, removed or renamed, its contents may not be written.
func macDirBelow(t Target, i, end, n int) bool {
	return t != MacOS || i == 0 || end < n
}

// UnixSocket answers whether the command can connect to the unix socket at
// p (a path as Path returns it) on target t.
func (e *Evaluator) UnixSocket(p string, t Target) Decision {
	n := &e.p.Network
	all := e.switchOrigin("network.allowAllUnixSockets")
	switch t {
	case Linux:
		if n.AllowAllUnixSockets {
			return Decision{Allow: true, Rule: all, Why: "no seccomp unix filter: every unix socket the file system lets it reach"}
		}
		return Decision{Rule: policy.Default, Why: "seccomp refuses socket(AF_UNIX): Linux cannot filter by path, so allowUnixSockets does not apply"}
	case MacOS:
		if n.AllowAllUnixSockets {
			return Decision{Allow: true, Rule: all, Why: "every unix socket path is allowed"}
		}
		var first *Decision
		for _, r := range n.AllowUnixSockets {
			// Always a subpath, never a glob (docs/reference.md#macos-network).
			r.Pattern = false
			if e.macApplies(r, macSockets) && e.covers(r, p, t) {
				d := Decision{Allow: true, Rule: r.Origin, Why: "allowed by subpath in the Seatbelt profile" + e.macGateWhy(r, macSockets)}
				if d.Why == "allowed by subpath in the Seatbelt profile" {
					return d
				}
				if first == nil {
					first = &d // one that holds whatever exists wins
				}
			}
		}
		if first != nil {
			return *first
		}
		var socks []policy.PathRule
		for _, r := range n.AllowUnixSockets {
			r.Pattern = false
			socks = append(socks, r)
		}
		return Decision{Rule: policy.Default, Why: "AF_UNIX sockets stay denied except the listed paths" + e.macNotHeld(socks, p, macSockets)}
	}
	w := e.Write(p, t)
	w.Why = "Windows does not filter AF_UNIX sockets; connecting needs write access to the socket file: " + w.Why + " (not verified on Windows)"
	return w
}

// bwrapDevices are the names below /dev that bubblewrap's --dev provides.
var bwrapDevices = map[string]bool{
	"null": true, "zero": true, "full": true, "random": true, "urandom": true, "tty": true,
	"ptmx": true, "stdin": true, "stdout": true, "stderr": true,
}

// gitDirs and gitFiles are the names the scan protects in a git
// directory (today's names for a policy from before the lists).
func gitDirs(sc *policy.MandatoryScan) []string {
	if sc.GitDirs == nil && sc.GitFiles == nil {
		return policy.GitDirs
	}
	return sc.GitDirs
}

func gitFiles(sc *policy.MandatoryScan) []string {
	if sc.GitDirs == nil && sc.GitFiles == nil {
		out := append([]string{}, policy.GitFiles...)
		if sc.GitConfig {
			out = append(out, policy.GitConfigFiles...)
		}
		return out
	}
	return sc.GitFiles
}
