package lint

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/review/query"
)

// Severity ranks a finding.
type Severity string

// The severities. An error fails srtc lint (exit 1).
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
)

// A Rule is one check, with a stable code.
type Rule struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Help     string   `json:"help"`
}

// Rules are every check, by code.
var Rules = []Rule{
	{"SRT101", "write-home", Error, "allowWrite grants the home directory (or an ancestor of it): the command can change shell start-up files, keys and every tool's configuration outside the working directory"},
	{"SRT102", "write-root", Error, "allowWrite grants / : the command can write everywhere the user can"},
	{"SRT103", "write-path-dir", Error, "allowWrite grants a directory on PATH or a shell start-up directory: a program put there runs outside the sandbox later"},
	{"SRT104", "write-cwd-is-home", Warning, "allowWrite grants the working directory, and srtc runs in the home directory: srt started here lets the command write the whole home directory"},
	{"SRT105", "write-dir-created", Note, "an allowWrite directory does not exist on this host yet: srt creates it before the run (below the home or working directory)"},
	{"SRT106", "write-dir-missing", Warning, "an allowWrite directory does not exist on this host, and srt does not create it (outside the home and working directories, spelled with .., or a name srt protects): the command cannot write it"},
	{"SRT107", "cwd-hidden", Warning, "a denyRead hides the directory srtc runs in: srt cannot start a command there"},
	{"SRT110", "dangerous-unix-socket", Error, "allowUnixSockets lists a socket that hands out more than the sandbox allows (docker, containerd, podman: root on the host; ssh or gpg agents: the user's keys)"},
	{"SRT111", "all-unix-sockets", Warning, "allowAllUnixSockets: every unix socket, including docker.sock and agent sockets, is reachable"},
	{"SRT120", "weakening-switch-in-project", Error, "a project-local settings file turns on a switch that weakens the sandbox; put it in the user's own settings if it is really needed"},
	{"SRT130", "allow-all-wildcard", Error, "a wildcard allows a whole top-level domain or every path"},
	{"SRT140", "shadowed-rule", Warning, "the rule never decides anything: another rule always decides first"},
	{"SRT141", "redundant-rule", Note, "the rule is covered by another rule of the same list"},
	{"SRT150", "duplicate", Warning, "the same rule appears twice in a list"},
	{"SRT160", "deny-write-over-root", Warning, "a denyWrite at or above an allowWrite root makes the whole root read-only"},
	{"SRT170", "glob-not-enforceable", Warning, "a target cannot enforce this glob as written"},
	{"SRT171", "glob-snapshot", Note, "Linux and Windows expand a deny glob when the sandbox starts: files created later are not covered"},
	{"SRT172", "allow-not-granted", Warning, "an allow entry that Linux grants grants nothing on macOS (a path under /tmp, /var or /etc that macOS names under /private, as the reference's profile does)"},
	{"SRT180", "deny-never-matches", Warning, "a deny entry can never match anything"},
	{"SRT190", "mask-without-tls", Error, "a credential is masked, but without network.tlsTerminate the real value is injected into plaintext traffic"},
	{"SRT191", "mask-inject-wildcard", Warning, "a masked credential's real value goes to every host under a wildcard: anyone with a host there receives it"},
	{"SRT192", "mask-inject-every-host", Warning, "a masked credential has no injectHosts, so its real value goes to every allowedDomains host"},
	{"SRT193", "credential-file-exposed", Error, "a credential file the settings hide or mask can be read, or changed, by the command on a target"},
	{"SRT194", "mask-body-inject", Warning, "a masked credential's real value goes into the request bodies of a host (bodyInjectHosts): whatever that host keeps, the command can read back, in pieces or encoded where srt cannot see it whole; and srt then reads every response of every host whole"},
}

// RuleOf returns the rule with a code.
func RuleOf(code string) Rule {
	for _, r := range Rules {
		if r.Code == code {
			return r
		}
	}
	panic("lint: unknown rule " + code)
}

// A Finding is one problem in one settings file.
type Finding struct {
	Code     string        `json:"code"`
	Severity Severity      `json:"severity"`
	Message  string        `json:"message"`
	Origin   policy.Origin `json:"origin"`
	// Targets are the platforms the finding concerns; empty means all.
	Targets []query.Target `json:"targets,omitempty"`
}

// String renders the finding compiler-style: "pos: severity SRTnnn: message".
func (f Finding) String() string {
	where := f.Origin.Pos
	if where == "" {
		where = f.Origin.Key
	} else {
		where += ": " + f.Origin.Key
	}
	on := ""
	if len(f.Targets) > 0 {
		var ts []string
		for _, t := range f.Targets {
			ts = append(ts, string(t))
		}
		on = " [" + strings.Join(ts, ",") + "]"
	}
	return fmt.Sprintf("%s: %s %s%s: %s", where, f.Severity, f.Code, on, f.Message)
}

// Options say what kind of settings file is linted.
type Options struct {
	// ProjectLocal is set for a settings file that lives in a project
	// (and so arrives with the code under review), not the user's own
	// ~/.srt-settings.json.
	ProjectLocal bool
	// Cwd and Home are the directory srtc runs in and the user's home
	// directory; when they are the same, an allowWrite of "." grants the
	// home directory (SRT104). "" turns the rule off, and the host
	// rules below.
	Cwd, Home string
	// Exists reports whether a path exists on the host srtc runs on
	// (lint itself touches no file): with it, allowWrite directories
	// that do not exist yet are reported (SRT105, SRT106). nil turns
	// these rules off.
	Exists func(path string) bool
}

// Lint checks a compiled settings file. Findings are sorted by position,
// then code.
func Lint(src *query.Source, opts Options) []Finding {
	l := &linter{src: src, p: src.Policy, e: src.Evaluator("", ""), opts: opts}
	l.writes()
	if r, ok := policy.WritesCwdAtHome(l.p, opts.Cwd, opts.Home); ok {
		l.add("SRT104", r.Origin, "allowWrite %q is the working directory, and the working directory (%s) is the home directory: run srt in the project's directory, or name the directories to write", ".", opts.Cwd)
	}
	l.host()
	l.sockets()
	l.switches()
	l.wildcards()
	l.shadows()
	l.duplicates()
	l.globs()
	l.neverMatch()
	l.masks()
	l.credentials()
	l.notGranted()
	keys := make(map[string]string, len(l.out))
	for _, f := range l.out {
		if _, ok := keys[f.Origin.Pos]; !ok {
			keys[f.Origin.Pos] = posKey(f.Origin.Pos)
		}
	}
	sort.SliceStable(l.out, func(i, j int) bool {
		a, b := l.out[i], l.out[j]
		if ka, kb := keys[a.Origin.Pos], keys[b.Origin.Pos]; ka != kb {
			return ka < kb
		}
		return a.Code < b.Code
	})
	return l.out
}

// posKey orders "file:line:col" numerically.
func posKey(pos string) string {
	parts := strings.Split(pos, ":")
	if len(parts) < 3 {
		return "~" + pos
	}
	n := len(parts)
	return fmt.Sprintf("%s:%08s:%08s", strings.Join(parts[:n-2], ":"), parts[n-2], parts[n-1])
}

type linter struct {
	src  *query.Source
	p    *policy.Policy
	e    *query.Evaluator
	opts Options
	out  []Finding
	// reopeners are the allowRead rules and the write roots the settings
	// wrote, indexed, for reopenedBetween.
	reopeners   []policy.PathRule
	reopenersAt coverIndex
}

func (l *linter) add(code string, o policy.Origin, format string, args ...any) {
	l.out = append(l.out, Finding{Code: code, Severity: RuleOf(code).Severity, Message: fmt.Sprintf(format, args...), Origin: o})
}

func (l *linter) addOn(code string, targets []query.Target, o policy.Origin, format string, args ...any) {
	l.add(code, o, format, args...)
	l.out[len(l.out)-1].Targets = targets
}

// userRules are the rules of a list that the settings wrote.
func userRules(rs []policy.PathRule) []policy.PathRule {
	var out []policy.PathRule
	for _, r := range rs {
		if r.Origin != policy.Default && r.Origin != policy.Mandatory {
			out = append(out, r)
		}
	}
	return out
}

// pathDirs are directories on a usual PATH and the shell start-up
// directories (policy.ExecDirs).
var pathDirs = policy.ExecDirs

// writes: SRT101-103, and SRT160.
func (l *linter) writes() {
	fs := &l.p.Filesystem
	if fs.Disabled {
		l.add("SRT102", l.switchOrigin("filesystem.disabled"), "filesystem.disabled: the file-system policy is off, the command can read and write everything the user can")
		return
	}
	for _, r := range userRules(fs.AllowWrite) {
		switch {
		case r.Covers(policy.Abs.Path()):
			l.add("SRT102", r.Origin, "allowWrite %q grants /", r.Path)
		case r.Covers(policy.Home.Path()):
			l.add("SRT101", r.Origin, "allowWrite %q grants the home directory", r.Path)
		default:
			for _, d := range pathDirs {
				if r.Covers(d) && !l.deniedWrite(d) {
					l.add("SRT103", r.Origin, "allowWrite %q grants %s", r.Path, d)
					break
				}
			}
		}
	}
	// Each pair of a denyWrite and a write root it covers, in the order of
	// the denies, then of the roots.
	dw, aw := userRules(fs.DenyWrite), userRules(fs.AllowWrite)
	dwAt := indexCovers(dw)
	var pairs [][2]int
	for j, a := range aw {
		for _, i := range dwAt.candidates(a.Path) {
			if dw[i].Covers(a.Path) {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	for _, pr := range pairs {
		d, a := dw[pr[0]], aw[pr[1]]
		l.add("SRT160", d.Origin, "denyWrite %q is at or above allowWrite %q (%s): all of that root is read-only; drop the allowWrite, or deny something inside it", d.Path, a.Path, a.Origin.Key)
	}
}

// deniedWrite reports whether a user denyWrite covers p.
func (l *linter) deniedWrite(p policy.Path) bool {
	for _, d := range userRules(l.p.Filesystem.DenyWrite) {
		if d.Covers(p) {
			return true
		}
	}
	return false
}

// switchOrigin is the Origin of a settings switch.
func (l *linter) switchOrigin(key string) policy.Origin {
	if o, ok := l.src.Policy.Switches[key]; ok {
		return o
	}
	return policy.Origin{Key: key}
}
