package query

import (
	"iter"
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
		return e.disabled()
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
	return e.derived("userWriteRoots", func() []policy.PathRule {
		var out []policy.PathRule
		for _, r := range e.p.Filesystem.AllowWrite {
			if r.Origin != policy.Default {
				out = append(out, r)
			}
		}
		return out
	})
}

// Write answers whether the command can change the host's file at p (a
// path as Path returns it) on target t: create, modify or remove it, with
// the change reaching the host.
func (e *Evaluator) Write(p string, t Target) Decision { return e.on(t).write(p) }

// disabled is the answer, for a read or a write, of a platform that
// confines nothing while the file-system policy is disabled.
func (e *Evaluator) disabled() Decision {
	return Decision{Allow: true, Rule: e.switchOrigin("filesystem.disabled"), Why: "the file-system policy is disabled"}
}

// writeDenied answers a write of p that one of the write denies l refuses
// on pl.
func writeDenied(pl platform, l []policy.PathRule, p string) (Decision, bool) {
	d, ok := firstCovering(pl, l, p)
	if !ok {
		return Decision{}, false
	}
	why := "write deny: wins over allowWrite, even at or above a write root"
	if d.Origin == policy.Mandatory {
		why = "mandatory write deny (shell start-up files, git and editor configuration, agent commands)"
	}
	return Decision{Rule: d.Origin, Why: why}, true
}

// gitHostRules are git's configuration outside the repository and gitk's
// start-up file in the home directory (policy.GitHostHome), as write
// denies: Linux and macOS protect them whatever the settings say, unless
// the file-system policy is disabled. The files the environment names
// ($XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL) and those they include are host
// facts the evaluator does not know.
func (e *Evaluator) gitHostRules() []policy.PathRule {
	return e.derived("gitHostRules", func() []policy.PathRule {
		if e.p.Filesystem.MandatoryScan == nil || e.p.Filesystem.Disabled {
			return nil
		}
		var out []policy.PathRule
		for _, p := range policy.GitHostHome() {
			out = append(out, policy.PathRule{Path: p, Origin: policy.Mandatory})
		}
		return out
	})
}

// noWriteRootWhy is the answer's why where no write root grants a path.
const noWriteRootWhy = "nothing is writable unless allowWrite grants it"

// rootWhy says which kind of write root allows a write.
func rootWhy(root policy.PathRule) string {
	switch {
	case root.Convenience:
		return "a default convenience directory, writable unless a read deny hides it"
	case root.Origin == policy.Default:
		return "a default writable path"
	}
	return "inside a write root"
}

// A protectedName is a name the mandatory denies protect (scan.Files,
// the git names, the editor and agent directories), met on the way from
// the working directory down to a path. Each platform decides at which
// depths it protects it.
type protectedName struct {
	// level is the depth of the directory holding the name (0 for the
	// working directory); limit the deepest level the start-up scan
	// (to mandatoryDenySearchDepth) reaches it at.
	level, limit int
	// end is the number of the path's segments through the name, of n.
	end, n int
	// dir is set for a directory protected with what is inside it
	// (.vscode, .idea, .git/hooks, .claude/commands); file for a name of
	// scan.Files.
	dir, file bool
	// inNodeModules is set once the path has passed a node_modules
	// directory.
	inNodeModules bool
	cwd           string
	segs          []string
}

// name is the protected name's path below the working directory.
func (c protectedName) name() string {
	name := c.cwd + "/" + strings.Join(c.segs[:c.level+1], "/")
	if s := c.segs[c.level]; s == ".git" || s == ".claude" {
		name += "/" + c.segs[c.level+1]
	}
	return name
}

// protectedNames are the protected names on the way down to p, shallowest
// first; none when p is not below the working directory.
func (e *Evaluator) protectedNames(p string, scan *policy.MandatoryScan) iter.Seq[protectedName] {
	return func(yield func(protectedName) bool) {
		cwd := e.expand(policy.Cwd.Path())
		below, ok := policy.Cwd.Within(cwd, p)
		if !ok || below.Rel() == "" {
			return
		}
		segs := strings.Split(below.Rel(), "/")
		inNodeModules := false
		for i, s := range segs {
			if s == "node_modules" {
				inNodeModules = true
			}
			// s is at level i+1; its parent directory at level i.
			c := protectedName{level: i, n: len(segs), inNodeModules: inNodeModules, cwd: cwd, segs: segs}
			switch {
			case s == ".git" && i+1 < len(segs) && slices.Contains(gitFiles(scan), segs[i+1]):
				c.limit, c.end = scan.Depth-2, i+2
			case s == ".git" && i+1 < len(segs) && slices.Contains(gitDirs(scan), segs[i+1]):
				c.limit, c.end, c.dir = scan.Depth-2, i+2, true
			case s == ".vscode" || s == ".idea":
				c.limit, c.end, c.dir = scan.Depth-2, i+1, true
			case s == ".claude" && i+1 < len(segs) && (segs[i+1] == "commands" || segs[i+1] == "agents"):
				c.limit, c.end, c.dir = scan.Depth-2, i+2, true
			case slices.Contains(scan.Files, s):
				c.limit, c.end, c.file = scan.Depth-1, i+1, true
			default:
				continue
			}
			if !yield(c) {
				return
			}
		}
	}
}

// UnixSocket answers whether the command can connect to the unix socket at
// p (a path as Path returns it) on target t.
func (e *Evaluator) UnixSocket(p string, t Target) Decision { return e.on(t).unixSocket(p) }

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
