package bwrap

import (
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// A Step is one line of the plan.
type Step struct {
	// Args are bubblewrap arguments; nil for a directive.
	Args []string
	// Directive is a step for the runtime to resolve; "" for Args.
	Directive Directive
	// Qualifier says how a path directive's operand reads ("" for the
	// plain path); written after the directive's name (@deny-read:pattern).
	Qualifier Qualifier
	// Operand is the directive's path, name or parameters.
	Operand string
	// Params marks an operand of parameters written by the compiler, shown
	// as is; other operands are quoted when not plain.
	Params bool
	// Origin is the setting behind the step, if any.
	Origin *policy.Origin
	// Line is the line of linux/bwrap.args the step was read from (Parse);
	// 0 for a step made in memory.
	Line int
	// Reason says why srt adds a step no setting asks for; written as the
	// line's comment when there is no Origin.
	Reason string
	// Comment is the comment of the line the step was read from (Parse):
	// shown in messages about the step (the setting it names), never
	// read for meaning, and not written by Render.
	Comment string
}

// Directive names a step that depends on the host.
type Directive string

// The directives, in the order they appear in a plan.
const (
	// UnsetEnv removes a variable from the command's environment.
	UnsetEnv Directive = "unset-env"
	// MaskEnv replaces a variable's value with a per-run sentinel.
	MaskEnv Directive = "mask-env"
	// GitSafeDirectory marks a directory safe.directory through
	// GIT_CONFIG_* variables numbered after the inherited ones.
	GitSafeDirectory Directive = "git-safe-directory"
	// ProxyEnv sets the proxy variables of this run (ports, token).
	ProxyEnv Directive = "proxy-env"
	// AllowWrite binds a path writable, if it exists and is not a symlink
	// leading elsewhere; ancestors of protected paths below it are pinned.
	AllowWrite Directive = "allow-write"
	// PrivateTmp binds a new, empty directory of the run at its operand,
	// writable, and sets TMPDIR to it: the command's temporary files are
	// neither shared with other runs nor with the host's directory of that
	// name, and are removed when the run ends. A write deny over the
	// operand makes it read-only; a read deny over it hides nothing of the
	// host there.
	PrivateTmp Directive = "private-tmp"
	// DenyRead hides a path: an empty tmpfs over a directory, /dev/null over
	// anything else; what AllowRead and AllowWrite name inside is restored.
	DenyRead Directive = "deny-read"
	// AllowRead restores a path inside a read deny.
	AllowRead Directive = "allow-read"
	// MaskFile shows a credential file with its secrets replaced.
	MaskFile Directive = "mask-file"
	// DenyWrite binds a path read-only where it is writable; an absent one
	// is kept from being created.
	DenyWrite Directive = "deny-write"
	// MandatoryScan protects the dangerous names found below the working
	// directory, to a depth: git-dirs and git-files name what it protects
	// in each git directory it finds.
	MandatoryScan Directive = "mandatory-scan"
	// GitHost protects git's configuration outside the repository and
	// gitk's start-up file (policy.GitHostConfig, policy.GitkStartup),
	// with what they include: the runtime finds the files on the host.
	GitHost Directive = "git-host-files"
	// SrtState keeps srt's own files from the sandbox (policy.SrtState):
	// the runtime knows where they are on the host.
	SrtState Directive = "srt-state"
	// KernelMask hides a kernel interface where it exists on the host: an
	// empty read-only tmpfs over a directory, /dev/null over a file.
	KernelMask Directive = "kernel-mask"
	// Landlock is the second layer: the init step restricts the command
	// with Landlock to writes below the paths of the LandlockWrite steps
	// and of its grant parameter, and keeps the scopes of its scope
	// parameter, as far as the host's kernel offers them. Its operand
	// "off" says the plan has no second layer (the file-system policy
	// disabled); a plan without the step is refused.
	Landlock Directive = "landlock"
	// LandlockWrite is one write root of the second layer, compiled from
	// the same setting as the AllowWrite or PrivateTmp step of its
	// operand, and resolved on its own: the runtime refuses a plan whose
	// writable binds reach beyond the second layer's write roots.
	LandlockWrite Directive = "landlock-write"
	// Limit is one resource limit of the sandbox: its operand is
	// KIND=VALUE (policy.LimitKinds).
	Limit Directive = "limit"
	// Seccomp installs the seccomp program of the host's architecture.
	Seccomp Directive = "seccomp"
)

// A Qualifier says how the operand of a path directive reads.
type Qualifier string

// The qualifiers.
const (
	// Pattern: a glob, also read as the literal name where that exists.
	Pattern Qualifier = "pattern"
	// Literal: the name as written, glob characters and all.
	Literal Qualifier = "literal"
	// UnlessHidden: a convenience path, left out where a read deny hides it.
	UnlessHidden Qualifier = "unless-hidden"
)

// Qualifiers are the qualifiers a path directive may take.
var Qualifiers = []Qualifier{Pattern, Literal, UnlessHidden}

// Name is the directive as a plan writes it: its name, and ":qualifier"
// when it has one.
func (s Step) Name() string {
	if s.Qualifier == "" {
		return string(s.Directive)
	}
	return string(s.Directive) + ":" + string(s.Qualifier)
}

// TmpDir is where the command finds its temporary directory (TMPDIR).
const TmpDir = policy.TmpDir

// Plan is the ordered bubblewrap plan of a policy.
type Plan struct {
	Source string
	Steps  []Step
	// Home and Cwd, when set, are the directories a concrete plan was
	// written for (Concrete); "" leaves the root symbolic.
	Home, Cwd string
}

// Emit returns the plan of p (docs/reference.md#bwrap-order for the order).
func Emit(p *policy.Policy) Plan {
	e := &emitter{pl: Plan{Source: p.Source}}
	e.args("--new-session")
	e.args("--die-with-parent")
	e.env(p)
	e.args("--unshare-net")
	e.dir(ProxyEnv, "", nil)
	e.filesystem(p)
	// Every plan, the file system disabled or not.
	e.step(Step{Directive: SrtState, Operand: policy.StateOperand(), Params: true, Reason: policy.StateWhy})
	e.args("--dev", "/dev")
	e.args("--unshare-pid")
	for _, ns := range policy.Namespaces {
		e.step(Step{Args: []string{ns.Arg}, Reason: ns.Why})
	}
	e.args("--unshare-user")
	e.args("--cap-drop", "ALL")
	if p.Process.EnableWeakerNestedSandbox {
		e.args("--bind", "/proc", "/proc")
	} else {
		e.args("--proc", "/proc")
	}
	e.kernel()
	e.process(p)
	return e.pl
}

// An emitter appends a plan's steps, in the order bubblewrap reads them.
type emitter struct{ pl Plan }

func (e *emitter) step(s Step) { e.pl.Steps = append(e.pl.Steps, s) }

// args is a step of bubblewrap arguments as they are.
func (e *emitter) args(a ...string) { e.step(Step{Args: a}) }

// dir is a directive the resolve step turns into arguments on the host.
func (e *emitter) dir(d Directive, operand string, o *policy.Origin) {
	e.step(Step{Directive: d, Operand: operand, Origin: o})
}

// paths is one directive d per rule, with the rule's qualifier.
func (e *emitter) paths(d Directive, rules []policy.PathRule) {
	for i := range rules {
		r := &rules[i]
		s := Step{Directive: d, Operand: r.Path.String(), Origin: &r.Origin}
		switch {
		case r.Pattern:
			s.Qualifier = Pattern
		case r.Literal:
			s.Qualifier = Literal
		case r.Convenience:
			s.Qualifier = UnlessHidden
		}
		e.step(s)
	}
}

// env is the environment: variables removed and masked, git's safe
// directories.
func (e *emitter) env(p *policy.Policy) {
	for i := range p.Env.Unset {
		e.dir(UnsetEnv, p.Env.Unset[i].Name, &p.Env.Unset[i].Origin)
	}
	for i := range p.Env.Mask {
		e.dir(MaskEnv, p.Env.Mask[i].Name, &p.Env.Mask[i].Origin)
	}
	for _, d := range p.Env.GitSafeDirectories {
		e.dir(GitSafeDirectory, d, &policy.Origin{Key: "git.safeDirectories"})
	}
}

// filesystem is the mount table: the root read-only (or writable, with
// the file-system policy disabled), the write roots, the run's own
// TMPDIR, the read denies and their carve-outs, the masked credential
// files, the write denies, the scan for protected names and git's files
// outside the repository.
func (e *emitter) filesystem(p *policy.Policy) {
	fs := p.Filesystem
	if fs.Disabled {
		e.args("--bind", "/", "/")
	} else {
		e.args("--ro-bind", "/", "/")
		writes, tmp := writeRoots(fs)
		e.paths(AllowWrite, writes)
		if tmp != nil {
			e.dir(PrivateTmp, TmpDir, tmp)
		}
		e.paths(DenyRead, fs.DenyRead)
		e.paths(AllowRead, fs.AllowRead)
	}
	e.paths(MaskFile, fs.CredentialMasks)
	if fs.Disabled {
		return
	}
	e.paths(DenyWrite, fs.DenyWrite)
	if sc := fs.MandatoryScan; sc != nil {
		git := "protect-config"
		if !sc.GitConfig {
			git = "allow-config"
		}
		op := fmt.Sprintf("depth=%d git=%s git-dirs=%s git-files=%s", sc.Depth, git, strings.Join(sc.GitDirs, ","), strings.Join(sc.GitFiles, ","))
		e.step(Step{Directive: MandatoryScan, Operand: op, Params: true, Origin: &sc.Origin})
		e.step(Step{Directive: GitHost, Operand: policy.GitHostOperand(), Params: true, Reason: policy.GitHostWhy})
	}
}

// writeRoots are the write roots of fs: the rules bound writable as they
// are, and the origin of the run's own TMPDIR (nil when there is none).
func writeRoots(fs policy.Filesystem) (writes []policy.PathRule, tmp *policy.Origin) {
	for i, r := range fs.AllowWrite {
		if p := r.Path.String(); r.Origin == policy.Default && (p == TmpDir || p == "/private"+TmpDir) {
			// The reference's shared /tmp/claude (and its macOS
			// spelling): a directory of the run's own here.
			tmp = &fs.AllowWrite[i].Origin
			continue
		}
		writes = append(writes, r)
	}
	return writes, tmp
}

// kernel is the kernel's interfaces, covered on every run: the source of
// a read-only bind is the host's own file, which exists exactly when the
// sandbox's /proc or /sys has it.
func (e *emitter) kernel() {
	for _, k := range policy.KernelPaths {
		if k.Mask {
			e.step(Step{Directive: KernelMask, Operand: k.Path, Reason: k.Why})
		} else {
			e.step(Step{Args: []string{"--ro-bind-try", k.Path, k.Path}, Reason: k.Why})
		}
	}
}

// process is what the init step applies to the command: the second
// layer, the resource limits, the seccomp programs.
func (e *emitter) process(p *policy.Policy) {
	e.landlock(p)
	for i := range p.Process.Limits {
		l := &p.Process.Limits[i]
		e.step(Step{Directive: Limit, Operand: fmt.Sprintf("%s=%d", l.Kind, l.Value), Params: true, Origin: &l.Origin})
	}
	if len(p.Process.Seccomp) > 0 {
		names := make([]string, len(p.Process.Seccomp))
		for i, r := range p.Process.Seccomp {
			names[i] = string(r)
		}
		e.dir(Seccomp, strings.Join(names, "+"), nil)
	}
}

// landlock is the second layer: its grants and scopes, then its write
// roots, one line each, compiled from the settings' write roots (the same
// rules as the @allow-write and @private-tmp lines, never from the
// binds); or, with the file-system policy disabled, a line that says it
// is off.
func (e *emitter) landlock(p *policy.Policy) {
	grants := p.Landlock()
	if grants == nil {
		o, ok := p.Switches["filesystem.disabled"]
		if !ok {
			o = policy.Origin{Key: "filesystem.disabled"}
		}
		e.step(Step{Directive: Landlock, Operand: LandlockOff, Params: true, Origin: &o})
		return
	}
	var paths []string
	for _, g := range grants {
		paths = append(paths, g.Path)
	}
	op := "grant=" + strings.Join(paths, ",") + " scope=" + strings.Join(policy.LandlockScopes, ",")
	e.step(Step{Directive: Landlock, Operand: op, Params: true, Reason: policy.LandlockWhy})
	writes, tmp := writeRoots(p.Filesystem)
	e.paths(LandlockWrite, writes)
	if tmp != nil {
		e.dir(LandlockWrite, TmpDir, tmp)
	}
}

// LandlockOff is the operand of a Landlock step that turns the second
// layer off.
const LandlockOff = "off"

// Render writes the plan as linux/bwrap.args: a header, then one step per
// line, with the setting behind it as a comment. An operand that is not
// plain is written as a Go-syntax quoted string.
func (pl Plan) Render() []byte {
	var b strings.Builder
	b.WriteString("# bubblewrap plan compiled by srtc from " + pl.Source + "\n")
	if pl.Home != "" || pl.Cwd != "" {
		b.WriteString("# A concrete plan: it runs only where the home directory is " + orSymbolic(pl.Home) + "\n")
		b.WriteString("# and the working directory is " + orSymbolic(pl.Cwd) + ".\n")
		b.WriteString("# --option lines are bubblewrap arguments. @step lines are resolved\n")
	} else {
		b.WriteString("# --option lines are bubblewrap arguments; ${HOME} and ${CWD} stand for\n")
		b.WriteString("# this run's home and working directories. @step lines are resolved\n")
	}
	b.WriteString("# against the host at run time, in this order. # comments name the\n")
	b.WriteString("# setting behind each step. @private-tmp is TMPDIR: a new, empty directory\n")
	b.WriteString("# of each run, bound there, seen by no other run and removed after it.\n")
	for _, s := range pl.Steps {
		var line string
		if s.Args != nil {
			words := make([]string, len(s.Args))
			for i, a := range s.Args {
				words[i] = quoteIfNeeded(a)
			}
			line = strings.Join(words, " ")
		} else {
			line = "@" + s.Name()
			switch {
			case s.Params:
				line += " " + s.Operand
			case s.Operand != "":
				line += " " + quoteIfNeeded(s.Operand)
			}
		}
		switch {
		case s.Origin != nil:
			comment := s.Origin.Key
			if s.Origin.Pos != "" {
				comment += " " + s.Origin.Pos
			}
			line = fmt.Sprintf("%-47s # %s", line, comment)
		case s.Reason != "":
			line = fmt.Sprintf("%-47s # srt: %s", line, s.Reason)
		}
		b.WriteString(line + "\n")
	}
	return []byte(b.String())
}

// quoteIfNeeded leaves plain operands alone and quotes the rest, so that
// every line reads back unambiguously.
func quoteIfNeeded(s string) string {
	if plain(s) {
		return s
	}
	return strconv.Quote(s)
}

func orSymbolic(dir string) string {
	if dir == "" {
		return "any (still symbolic)"
	}
	return quoteIfNeeded(dir)
}

// Concrete returns the plan with the symbolic roots filled in for one host:
// ${HOME} by home and ${CWD} by cwd, where they are not "". Only a word
// or operand that is a policy path (policy.ParsePath) starting at one of
// them is changed.
func (pl Plan) Concrete(home, cwd string) Plan {
	out := pl
	out.Home, out.Cwd = home, cwd
	out.Steps = make([]Step, len(pl.Steps))
	fill := func(s string) string {
		p, err := policy.ParsePath(s)
		if err != nil || p.Root() != policy.Home && p.Root() != policy.Cwd {
			return s
		}
		if c, ok := p.Expand(home, cwd); ok {
			return c
		}
		return s
	}
	for i, s := range pl.Steps {
		if s.Args != nil {
			s.Args = append([]string(nil), s.Args...)
			for j := range s.Args {
				s.Args[j] = fill(s.Args[j])
			}
		} else if !s.Params {
			s.Operand = fill(s.Operand)
		}
		out.Steps[i] = s
	}
	return out
}
