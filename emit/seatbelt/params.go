package seatbelt

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// The sandbox-exec parameters a profile reads with (param "NAME"); the
// runtime passes each with -D NAME=VALUE. They keep host facts out of the
// profile, so the same settings give the same bytes on every machine.
const (
	ParamHome             = "HOME"               // the home directory, as the kernel spells it (no symlinks)
	ParamCwd              = "CWD"                // the working directory, likewise
	ParamHomeRegex        = "HOME_REGEX"         // HOME with regex metacharacters escaped
	ParamCwdRegex         = "CWD_REGEX"          // CWD likewise
	ParamHomeParentsRegex = "HOME_PARENTS_REGEX" // matches exactly HOME's ancestors other than "/"
	ParamCwdParentsRegex  = "CWD_PARENTS_REGEX"  // CWD's likewise
	ParamHTTPPort         = "HTTP_PROXY_PORT"    // srt's HTTP proxy on 127.0.0.1
	ParamSOCKSPort        = "SOCKS_PROXY_PORT"   // srt's SOCKS5 proxy on 127.0.0.1
	ParamLogTag           = "LOG_TAG"            // the violation attribution tag (docs/reference.md#macos-log-tag)
)

// ParamCarvePrefix names the carve parameters CARVE_1, CARVE_2, ...: one
// per subtraction from a deny whose answer depends on where HOME and the
// working directory are (see HostDefines).
const ParamCarvePrefix = "CARVE_"

// carveOff is a carve parameter's value where the carve does not apply:
// put in front of a path, it makes a path no file has (/dev/null is not a
// directory), so the subtraction matches nothing.
const carveOff = "/dev/null"

func carveParamName(n int) string { return ParamCarvePrefix + strconv.Itoa(n) }

// HostDefines returns the NAME=VALUE pairs for sandbox-exec -D to run p's
// profile on host h: Defines, the /private parameters (see Probes) and the
// carve parameters of the profile.
// A carve applies where the reference would subtract on this host: the
// deny's rule, with this host's directories, covers the entry's path
// (docs/reference.md#macos-reads step 4); a convenience write root's applies
// where no read deny hides it on this host (docs/reference.md#default-writable). It is a
// pure function of p and h.
func HostDefines(p *policy.Policy, h Host) []string {
	m := emit(p)
	return m.program().Defines(h)
}

// Defines returns the NAME=VALUE pairs for sandbox-exec -D to run the
// program's profile on host h, as HostDefines does.
func (p *Program) Defines(h Host) []string {
	out := h.Defines()
	for i, q := range p.privates {
		v := carveOff
		if h.Exists[q] {
			v = ""
		}
		out = append(out, privateParamName(i+1)+"="+v)
	}
	for i, c := range p.carves {
		v := carveOff
		switch {
		case c.denies != nil:
			if !hidden(c.o.on(h), c.denies, c.allows, h) {
				v = ""
			}
		case covers(c.d.on(h), c.o.on(h)):
			v = ""
		}
		out = append(out, carveParamName(i+1)+"="+v)
	}
	sort.Strings(out)
	return out
}

// Probes are the paths whose existence the program's profile asks for
// (see the function Probes).
func (p *Program) Probes() []string { return slices.Clone(p.privates) }

// hidden reports whether a read deny covers the literal entry w on h and
// no literal read allow inside that deny covers w again (docs/reference.md#default-writable).
func hidden(w entry, denies, allows []entry, h Host) bool {
	p := w.lit
	for _, d := range denies {
		d = d.on(h)
		if !coversPath(d, p) {
			continue
		}
		reopened := false
		for _, a := range allows {
			if a.glob() || a.dirs || a.gate != "" && !h.Exists[a.gate] {
				continue // only a literal allow reopens it, where it applies
			}
			a = a.on(h)
			if coversPath(a, p) && coversPath(d, a.sample()) {
				reopened = true
			}
		}
		if !reopened {
			return true
		}
	}
	return false
}

// coversPath reports whether entry e, read as a deny, covers path p: p
// is e's path or below it, or a pattern matches p or an ancestor.
func coversPath(e entry, p string) bool {
	if e.glob() {
		return e.goRegexp(true).MatchString(p)
	}
	return p == e.lit || e.lit == "/" || strings.HasPrefix(p, e.lit+"/")
}

// on is e with its root replaced by h's directory: an absolute entry.
func (e entry) on(h Host) entry {
	dir := map[string]string{string(policy.Home): h.Home, string(policy.Cwd): h.Cwd}[e.root]
	if e.root == "" {
		return e
	}
	x := e
	x.root, x.lit = "", dir+e.lit
	if x.lit == "" {
		x.lit = "/"
	}
	return x
}

// Host is what the runtime knows about one run. HOME and CWD must be
// absolute and free of symlinks (Seatbelt matches the path the kernel
// resolved, docs/reference.md#macos-pitfalls).
type Host struct {
	Home, Cwd           string
	HTTPPort, SOCKSPort int
	LogTag              string
	// Exists says which of the paths Probes names (symbolic, as Probes
	// returns them) exist when srt starts, as the reference's realpath
	// adopts them; a path missing from it counts as absent.
	Exists map[string]bool
}

// Check reports host facts a profile cannot be run with. HOME and CWD
// must be absolute, clean (no "//", ".", ".." or trailing "/") and not "/":
// every rule under them is the parameter followed by "/name", so "/" or
// "/w/" would give "//name", a path the kernel never checks, and those
// rules (the mandatory write denies, ./.env, ~/.ssh) would match nothing.
func (h Host) Check() error {
	for _, d := range []struct{ name, dir string }{{ParamHome, h.Home}, {ParamCwd, h.Cwd}} {
		switch {
		case d.dir == "/":
			return fmt.Errorf("%s is \"/\": the profile names paths under it as \"/\" + \"/name\", which matches nothing; run from (or set HOME to) another directory", d.name)
		case !strings.HasPrefix(d.dir, "/") || path.Clean(d.dir) != d.dir:
			return fmt.Errorf("%s (%q) must be an absolute, clean path", d.name, d.dir)
		}
	}
	return nil
}

// Defines returns the NAME=VALUE pairs for sandbox-exec -D, sorted by name.
func (h Host) Defines() []string {
	m := map[string]string{
		ParamHome:             h.Home,
		ParamCwd:              h.Cwd,
		ParamHomeRegex:        policy.RegexEscape(h.Home),
		ParamCwdRegex:         policy.RegexEscape(h.Cwd),
		ParamHomeParentsRegex: parentsRegex(h.Home),
		ParamCwdParentsRegex:  parentsRegex(h.Cwd),
		ParamHTTPPort:         strconv.Itoa(h.HTTPPort),
		ParamSOCKSPort:        strconv.Itoa(h.SOCKSPort),
		ParamLogTag:           h.LogTag,
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// parentsRegex matches exactly the ancestors of dir other than "/"; for a
// directory directly under "/" (or "/" itself) it matches nothing (no path
// is empty).
func parentsRegex(dir string) string {
	var alts []string
	for a := parent(dir); a != "/" && a != ""; a = parent(a) {
		alts = append([]string{policy.RegexEscape(a)}, alts...)
	}
	if len(alts) == 0 {
		return "^$"
	}
	return "^(" + strings.Join(alts, "|") + ")$"
}

// parent is the directory above p ("/" for "/x", "" for "/").
func parent(p string) string {
	if p == "/" || p == "" {
		return ""
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// Concrete is probe (see Probes) on host h: ${HOME} or ${CWD} at its
// start replaced by h's directory, the rest as written ("..", if any,
// kept for the host to resolve). ok is false when h does not name the
// directory (Home or Cwd is ""), or probe is no policy path.
func (h Host) Concrete(probe string) (path string, ok bool) {
	p, err := policy.ParsePath(probe)
	if err != nil {
		return "", false
	}
	return p.Expand(h.Home, h.Cwd)
}

// ParamPrivatePrefix names the parameters PRIVATE_1, PRIVATE_2, ...: one
// per path whose existence when srt starts decides the /private spelling
// of an allow under /tmp, /var or /etc, or the folded spelling of one
// with ".." (see Probes).
const ParamPrivatePrefix = "PRIVATE_"

func privateParamName(n int) string { return ParamPrivatePrefix + strconv.Itoa(n) }

// privateParam is the parameter name of gate, numbered in the order the
// profile first needs it.
func (m *emitter) privateParam(gate string) string {
	n := slices.Index(m.privates, gate) + 1
	if n == 0 {
		m.privates = append(m.privates, gate)
		n = len(m.privates)
	}
	return privateParamName(n)
}

// Probes are the paths whose existence when srt starts p's profile asks
// for, in Host.Exists: for each allow under /tmp, /var or /etc, or with
// "..", the path (a pattern's directory before its first wildcard, a read
// allow's directory) whose realpath the reference adopts. Seatbelt sees
// such an allow only in its /private or folded form, which the reference
// has only where the path existed when it started; its parameter
// PRIVATE_n is "" where the path exists and carveOff where it does not.
// A probe is symbolic: it may start with ${HOME} or ${CWD}
// (policy.Home, policy.Cwd), which the runtime replaces with Host.Home
// and Host.Cwd as written, ".." kept.
func Probes(p *policy.Policy) []string {
	return slices.Clone(emit(p).privates)
}
