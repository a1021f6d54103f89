package seatbelt

import (
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// Emit returns the Seatbelt profile of p (docs/reference.md#macos-profile-layout for
// the layout). It is a pure function: the same policy gives the same bytes.
// Host facts are sandbox-exec parameters (see Host). It fails, with an
// *Error naming the setting, for a path the profile cannot express safely.
//
// Nothing here has run on a real Mac: the rule text follows the spec,
// which records what the reference emits; the parameter expressions
// ((param ...), string-append) and the tag as a parameter are this
// project's, and sandbox-exec has not read them yet.
func Emit(p *policy.Policy) ([]byte, error) {
	m := emit(p)
	if m.err != nil {
		return nil, m.err
	}
	return []byte(strings.Join(m.lines, "\n") + "\n"), nil
}

// emit builds the profile of p.
func emit(p *policy.Policy) *emitter { return emitWith(p, false) }

// emitWith builds the profile of p, in the emitter's linear mode when
// linear is set.
func emitWith(p *policy.Policy, linear bool) *emitter {
	m := &emitter{linear: linear}
	m.header(p)
	m.add(baseHead...)
	if p.Process.EnableWeakerNetworkIsolation {
		m.add(weakerNetworkIsolation...)
	}
	if p.Process.AllowAppleEvents {
		m.add(appleEvents...)
	}
	for _, name := range p.Network.AllowMachLookup {
		origin := policy.Origin{Key: "network.allowMachLookup"}
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			m.add("(allow mach-lookup (global-name-prefix " + m.q(prefix, origin) + "))")
		} else {
			m.add("(allow mach-lookup (global-name " + m.q(name, origin) + "))")
		}
	}
	for _, l := range baseTail {
		if l == "SYSCTL" {
			m.add(sysctlRead()...)
			continue
		}
		m.add(l)
	}
	m.network(p.Network)
	fs := p.Filesystem
	if fs.Disabled && len(fs.CredentialMasks) == 0 {
		m.add("; File system: not restricted (filesystem.disabled)")
		m.add("(allow file-read*)", "(allow file-write*)")
	} else {
		m.files(fs)
	}
	if p.Process.AllowPty {
		m.add("; Pseudo-terminals (allowPty)")
		m.add(pty...)
	}
	return m
}

// emitter accumulates profile lines; the first error sticks.
type emitter struct {
	lines []string
	err   error
	// carves are the subtractions decided at run time, in the order of
	// their parameters (CARVE_1, ...); carveIndex finds one again.
	carves     []carve
	carveIndex map[[2]string]int
	interned   map[entry]*entry
	// privates are the paths whose existence decides the /private or
	// folded spelling of an allow, in the order of their parameters
	// (PRIVATE_1, ...).
	privates []string
	// linear makes carve and late compare each deny with every entry
	// (see otherIndex); the tests compare both ways.
	linear bool
	// allowMemo, denyMemo and prefixMemo hold each entry's filters:
	// carve asks for the same ones for many denies.
	allowMemo, denyMemo map[entry]string
	prefixMemo          map[entry][2]string
}

func (m *emitter) add(lines ...string) { m.lines = append(m.lines, lines...) }

// q quotes s as a string literal (see quote).
func (m *emitter) q(s string, o policy.Origin) string {
	v, err := quote(s, o)
	if err != nil && m.err == nil {
		m.err = err
	}
	return v
}

// tag is the message every computed rule and the default deny carry.
var tag = `(with message (param "` + ParamLogTag + `"))`

// rule writes a computed rule (docs/reference.md#macos-profile-layout): a header line, one filter per line,
// and the tag. Filters are de-duplicated keeping the first; a rule without
// filters is left out, since it would match everything (docs/reference.md#macos-pitfalls).
func (m *emitter) rule(head string, filters []string) {
	seen := map[string]bool{}
	var fs []string
	for _, f := range filters {
		if !seen[f] {
			seen[f] = true
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return
	}
	m.add("(" + head)
	for _, f := range fs {
		m.add("  " + f)
	}
	m.add("  " + tag + ")")
}

func (m *emitter) header(p *policy.Policy) {
	m.add("(version 1)")
	m.add("(deny default " + tag + ")")
	m.add("; Seatbelt profile compiled by srtc from " + strings.Map(printable, p.Source) + ".")
	m.add("; Violations are logged with the tag sandbox-exec passes as LOG_TAG.")
	m.add("; Host facts are parameters: sandbox-exec -D NAME=VALUE for " + strings.Join([]string{
		ParamHome, ParamCwd, ParamHomeRegex, ParamCwdRegex, ParamHomeParentsRegex, ParamCwdParentsRegex,
		ParamHTTPPort, ParamSOCKSPort, ParamLogTag}, " ") + ".")
	m.add("; Not yet run on a real Mac (see README, macOS).")
	var kinds []string
	for _, st := range policy.SrtState {
		if st.Hidden {
			kinds = append(kinds, string(st.Kind)+" (hidden)")
		} else {
			kinds = append(kinds, string(st.Kind))
		}
	}
	m.add("; srt appends rules after this profile, whatever it says, for " + policy.StateWhy + ": read-only, where they are on the host: " + strings.Join(kinds, ", ") + ".")
	for _, l := range p.Process.Limits {
		m.add(fmt.Sprintf("; %s = %d (%s): not enforced on macOS: Seatbelt has no resource limits, and srt sets none there.", l.Origin.Key, l.Value, strings.Map(printable, l.Origin.Pos)))
	}
}

// printable keeps a comment on one line.
func printable(r rune) rune {
	if r < 0x20 || r == 0x7f {
		return '?'
	}
	return r
}

// The parameters behind each symbolic root.
var rootParams = map[string][3]string{
	string(policy.Home): {ParamHome, ParamHomeRegex, ParamHomeParentsRegex},
	string(policy.Cwd):  {ParamCwd, ParamCwdRegex, ParamCwdParentsRegex},
}

// str is the string expression of a symbolic path.
func (m *emitter) str(p string, o policy.Origin) string {
	root, rest := split(p)
	switch {
	case root == "":
		return m.q(p, o)
	case rest == "":
		return `(param "` + rootParams[root][0] + `")`
	}
	return `(string-append (param "` + rootParams[root][0] + `") ` + m.q(rest, o) + ")"
}

// regex is the regex expression of an entry: the exact form for an allow,
// with the subtree tail "(/.*)?" for a deny (docs/reference.md#macos-filters). The root is the
// parameter holding it regex-escaped; the literal text after it is escaped
// here, so that a name with brackets is never read as a set.
//
// An allow written with a trailing separator ("/data/in/*/") names
// directories, and Seatbelt never checks a path that ends in "/": its
// regex ends in "/$" and matches nothing, as the reference's does. Linux
// drops the separator; matching the glob without it would grant every
// file directly in the directory, which the reference denies.
func (m *emitter) regex(e entry, deny bool) string {
	rest := policy.RegexEscape(e.lit) + body(e.pat)
	switch {
	case deny:
		rest += "(/.*)?"
	case e.dirs:
		rest += "/"
	}
	rest += "$"
	if e.root == "" {
		return "(regex " + m.q("^"+rest, e.origin) + ")"
	}
	return `(regex (string-append "^" (param "` + rootParams[e.root][1] + `") ` + m.q(rest, e.origin) + "))"
}

// allowFPrefixed is allowF with the string expression pre in front of the
// path (or after the "^" of the regex).
func (m *emitter) allowFPrefixed(e entry, pre string) string {
	parts, ok := m.prefixMemo[e]
	if !ok {
		parts[0], parts[1] = m.prefixParts(e)
		if m.prefixMemo == nil {
			m.prefixMemo = map[entry][2]string{}
		}
		m.prefixMemo[e] = parts
	}
	return parts[0] + pre + parts[1]
}

// prefixParts are what allowFPrefixed puts before and after pre.
func (m *emitter) prefixParts(e entry) (head, tail string) {
	if e.glob() || e.dirs {
		rest := policy.RegexEscape(e.lit) + body(e.pat)
		if e.dirs {
			rest += "/"
		}
		rest += "$"
		if e.root == "" {
			return `(regex (string-append "^" `, " " + m.q(rest, e.origin) + "))"
		}
		return `(regex (string-append "^" `, ` (param "` + rootParams[e.root][1] + `") ` + m.q(rest, e.origin) + "))"
	}
	root, rest := split(e.spelling())
	if root == "" {
		return "(subpath (string-append ", " " + m.q(rest, e.origin) + "))"
	}
	if rest == "" {
		return "(subpath (string-append ", ` (param "` + rootParams[root][0] + `")))`
	}
	return "(subpath (string-append ", ` (param "` + rootParams[root][0] + `") ` + m.q(rest, e.origin) + "))"
}

// allowF is an entry's filter in an allow rule; denyF in a deny rule.
func (m *emitter) allowF(e entry) string {
	if f, ok := m.allowMemo[e]; ok {
		return f
	}
	var f string
	switch {
	case e.pre != "":
		f = m.allowFPrefixed(e, e.pre)
	case e.glob() || e.dirs:
		f = m.regex(e, false)
	default:
		f = "(subpath " + m.str(e.spelling(), e.origin) + ")"
	}
	if m.allowMemo == nil {
		m.allowMemo = map[entry]string{}
	}
	m.allowMemo[e] = f
	return f
}

func (m *emitter) denyF(e entry) string {
	if f, ok := m.denyMemo[e]; ok {
		return f
	}
	var f string
	if e.glob() {
		f = m.regex(e, true)
	} else {
		f = "(subpath " + m.str(e.spelling(), e.origin) + ")"
	}
	if m.denyMemo == nil {
		m.denyMemo = map[entry]string{}
	}
	m.denyMemo[e] = f
	return f
}

// pinF is the filter of one directory kept in place.
func (m *emitter) pinF(p string) string {
	if root, ok := strings.CutPrefix(p, rootParents); ok {
		return `(regex (param "` + rootParams[root][2] + `"))`
	}
	return "(literal " + m.str(p, policy.Origin{Key: "pin"}) + ")"
}

// network writes the network section (docs/reference.md#macos-network). A settings file always
// restricts the network (network.allowedDomains is required), so the
// unrestricted form "(allow network*)" never appears: only srt's proxies
// on 127.0.0.1 are reachable, plus what the flags open.
func (m *emitter) network(n policy.Network) {
	m.add("; Network: only srt's proxies on localhost")
	if n.AllowLocalBinding {
		m.add(`(allow network-bind (local ip "*:*"))`,
			`(allow network-inbound (local ip "*:*"))`,
			`(allow network-outbound (remote ip "localhost:*"))`)
	}
	switch {
	case n.AllowAllUnixSockets:
		m.add("(allow system-socket (socket-domain AF_UNIX))",
			`(allow network-bind (local unix-socket (path-regex #"^/")))`,
			`(allow network-outbound (remote unix-socket (path-regex #"^/")))`)
	case len(n.AllowUnixSockets) > 0:
		m.add("(allow system-socket (socket-domain AF_UNIX))")
		for _, r := range n.AllowUnixSockets {
			// Never a pattern (docs/reference.md#macos-pitfalls): "*" in a socket path is a name.
			r.Pattern, r.Literal, r.TrailingSeparator = false, true, false
			for _, e := range m.allowEntries([]policy.PathRule{r}, socketAllow) {
				f := m.allowF(e) // a subpath, behind its parameter where it has one
				m.add("(allow network-bind (local unix-socket "+f+"))",
					"(allow network-outbound (remote unix-socket "+f+"))")
			}
		}
	}
	httpPort := `(string-append "localhost:" (param "` + ParamHTTPPort + `"))`
	if n.HTTPProxyPort != 0 {
		httpPort = `"localhost:` + strconv.Itoa(n.HTTPProxyPort) + `"`
	}
	socksPort := `(string-append "localhost:" (param "` + ParamSOCKSPort + `"))`
	if n.SOCKSProxyPort != 0 {
		socksPort = `"localhost:` + strconv.Itoa(n.SOCKSProxyPort) + `"`
	}
	ports := []string{httpPort, socksPort}
	if socksPort == httpPort {
		ports = ports[:1] // one proxy serves both (docs/reference.md#macos-network)
	}
	for _, port := range ports {
		m.add("(allow network-bind (local ip "+port+"))",
			"(allow network-inbound (local ip "+port+"))",
			"(allow network-outbound (remote ip "+port+"))")
	}
}
