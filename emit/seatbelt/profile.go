package seatbelt

import (
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// Emit returns the Seatbelt profile of p (docs/reference.md#macos-profile-layout for
// the layout): Compile's program, rendered. It is a pure function: the
// same policy gives the same bytes. Host facts are sandbox-exec
// parameters (see Host). It fails, with an *Error naming the setting, for
// a path the profile cannot express safely.
//
// Nothing here has run on a real Mac: the rule text follows the spec,
// which records what the reference emits; the parameter expressions
// ((param ...), string-append) and the tag as a parameter are this
// project's, and sandbox-exec has not read them yet.
func Emit(p *policy.Policy) ([]byte, error) {
	prog, err := Compile(p)
	if err != nil {
		return nil, err
	}
	return prog.Render(), nil
}

// Compile returns the program of p's profile: its rules, in order, each
// filter with the settings entry or built-in rule that made it. It fails
// as Emit does.
func Compile(p *policy.Policy) (*Program, error) {
	m := emit(p)
	if m.err != nil {
		return nil, m.err
	}
	return m.program(), nil
}

// program is what the emitter built, its pending comments at the end.
func (m *emitter) program() *Program {
	prog := m.prog
	prog.Trailing = m.pending
	prog.privates, prog.carves = m.privates, m.carves
	return &prog
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
		f := Filter{Kind: GlobalName, Str: Str{m.t(name, origin)}, Origin: origin}
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			f = Filter{Kind: GlobalNamePrefix, Str: Str{m.t(prefix, origin)}, Origin: origin}
		}
		m.add(fixed(ops("mach-lookup"), f.withText()))
	}
	m.add(baseTail...)
	m.network(p.Network)
	fs := p.Filesystem
	if fs.Disabled && len(fs.CredentialMasks) == 0 {
		m.comment("File system: not restricted (filesystem.disabled)")
		m.add(Rule{Action: Allow, Ops: ops("file-read*"), Step: StepNoFiles}, Rule{Action: Allow, Ops: ops("file-write*"), Step: StepNoFiles})
	} else {
		m.files(fs)
	}
	if p.Process.AllowPty {
		m.comment("Pseudo-terminals (allowPty)")
		for _, r := range pty {
			r.Step = StepPty
			m.add(r)
		}
	}
	return m
}

// emitter accumulates the program; the first error sticks.
type emitter struct {
	prog    Program
	pending []string // comments for the next rule
	err     error
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
	allowMemo, denyMemo map[entry]Filter
	prefixMemo          map[entry][2]Str
}

// add appends rules, the pending comments before the first.
func (m *emitter) add(rules ...Rule) {
	for _, r := range rules {
		if len(m.pending) > 0 {
			r.Comments = append(append([]string{}, m.pending...), r.Comments...)
			m.pending = nil
		}
		m.prog.Rules = append(m.prog.Rules, r)
	}
}

// comment writes a comment line before the next rule.
func (m *emitter) comment(s string) { m.pending = append(m.pending, s) }

// q quotes s as a string literal (see quote).
func (m *emitter) q(s string, o policy.Origin) string {
	v, err := quote(s, o)
	if err != nil && m.err == nil {
		m.err = err
	}
	return v
}

// t is s as a piece of text of a string expression, checked as quote
// checks it; o names the setting in the error.
func (m *emitter) t(s string, o policy.Origin) Part {
	m.q(s, o)
	return Part{Text: s}
}

// rule writes a computed rule (docs/reference.md#macos-profile-layout): a header line, one filter per line,
// and the tag. Filters are de-duplicated by their text, keeping the
// first; a rule without filters is left out, since it would match
// everything (docs/reference.md#macos-pitfalls).
func (m *emitter) rule(step Step, a Action, o []string, filters []Filter) *Rule {
	seen := make(map[string]bool, len(filters))
	var fs []Filter
	for _, f := range filters {
		if s := f.String(); !seen[s] {
			seen[s] = true
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	m.add(Rule{Action: a, Ops: o, Filters: fs, Step: step, Form: FormBlock, Tag: true})
	return &m.prog.Rules[len(m.prog.Rules)-1]
}

func (m *emitter) header(p *policy.Policy) {
	m.add(Rule{Action: Deny, Ops: ops("default"), Step: StepBase, Tag: true})
	m.comment("Seatbelt profile compiled by srtc from " + strings.Map(printable, p.Source) + ".")
	m.comment("Violations are logged with the tag sandbox-exec passes as LOG_TAG.")
	m.comment("Host facts are parameters: sandbox-exec -D NAME=VALUE for " + strings.Join([]string{
		ParamHome, ParamCwd, ParamHomeRegex, ParamCwdRegex, ParamHomeParentsRegex, ParamCwdParentsRegex,
		ParamHTTPPort, ParamSOCKSPort, ParamLogTag}, " ") + ".")
	m.comment("Not yet run on a real Mac (see README, macOS).")
	var kinds []string
	for _, st := range policy.SrtState {
		if st.Hidden {
			kinds = append(kinds, string(st.Kind)+" (hidden)")
		} else {
			kinds = append(kinds, string(st.Kind))
		}
	}
	m.comment("srt appends rules after this profile, whatever it says, for " + policy.StateWhy + ": read-only, where they are on the host: " + strings.Join(kinds, ", ") + ".")
	for _, l := range p.Process.Limits {
		m.comment(fmt.Sprintf("%s = %d (%s): not enforced on macOS: Seatbelt has no resource limits, and srt sets none there.", l.Origin.Key, l.Value, strings.Map(printable, l.Origin.Pos)))
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
func (m *emitter) str(p string, o policy.Origin) Str {
	root, rest := split(p)
	switch {
	case root == "":
		return Str{m.t(p, o)}
	case rest == "":
		return Str{param(rootParams[root][0])}
	}
	return Str{param(rootParams[root][0]), m.t(rest, o)}
}

// regex is the regex filter of an entry: the exact form for an allow,
// with the subtree tail "(/.*)?" for a deny (docs/reference.md#macos-filters). The root is the
// parameter holding it regex-escaped; the literal text after it is escaped
// here, so that a name with brackets is never read as a set.
//
// An allow written with a trailing separator ("/data/in/*/") names
// directories, and Seatbelt never checks a path that ends in "/": its
// regex ends in "/$" and matches nothing, as the reference's does. Linux
// drops the separator; matching the glob without it would grant every
// file directly in the directory, which the reference denies.
func (m *emitter) regex(e entry, deny bool) Filter {
	rest := policy.RegexEscape(e.lit) + body(e.pat)
	switch {
	case deny:
		rest += "(/.*)?"
	case e.dirs:
		rest += "/"
	}
	rest += "$"
	return m.rawRegex(e, rest)
}

// allowFPrefixed is allowF with the parameters pre in front of the path
// (or after the "^" of the regex).
func (m *emitter) allowFPrefixed(e entry, pre []Part) Filter {
	parts, ok := m.prefixMemo[e]
	if !ok {
		parts[0], parts[1] = m.prefixParts(e)
		if m.prefixMemo == nil {
			m.prefixMemo = map[entry][2]Str{}
		}
		m.prefixMemo[e] = parts
	}
	s := append(append(append(Str{}, parts[0]...), pre...), parts[1]...)
	kind := Subpath
	if e.glob() || e.dirs {
		kind = Regex
	}
	return Filter{Kind: kind, Str: s, Origin: e.origin, Gate: e.gate}.withText()
}

// prefixParts are what allowFPrefixed puts before and after pre.
func (m *emitter) prefixParts(e entry) (head, tail Str) {
	if e.glob() || e.dirs {
		rest := policy.RegexEscape(e.lit) + body(e.pat)
		if e.dirs {
			rest += "/"
		}
		rest += "$"
		if e.root == "" {
			return Str{{Text: "^"}}, Str{m.t(rest, e.origin)}
		}
		return Str{{Text: "^"}}, Str{param(rootParams[e.root][1]), m.t(rest, e.origin)}
	}
	root, rest := split(e.spelling())
	if root == "" {
		return nil, Str{m.t(rest, e.origin)}
	}
	if rest == "" {
		return nil, Str{param(rootParams[root][0])}
	}
	return nil, Str{param(rootParams[root][0]), m.t(rest, e.origin)}
}

// preParts are the parameters an entry's pre names.
func preParts(pre string) []Part {
	var out []Part
	for _, name := range strings.Fields(pre) {
		out = append(out, param(name))
	}
	return out
}

// allowF is an entry's filter in an allow rule; denyF in a deny rule.
func (m *emitter) allowF(e entry) Filter {
	if f, ok := m.allowMemo[e]; ok {
		return f
	}
	var f Filter
	switch {
	case e.pre != "":
		f = m.allowFPrefixed(e, preParts(e.pre))
	case e.glob() || e.dirs:
		f = m.regex(e, false)
	default:
		f = Filter{Kind: Subpath, Str: m.str(e.spelling(), e.origin), Origin: e.origin}
	}
	f = f.withText()
	f.Gate = e.gate
	if m.allowMemo == nil {
		m.allowMemo = map[entry]Filter{}
	}
	m.allowMemo[e] = f
	return f
}

func (m *emitter) denyF(e entry) Filter {
	if f, ok := m.denyMemo[e]; ok {
		return f
	}
	var f Filter
	if e.glob() {
		f = m.regex(e, true)
	} else {
		f = Filter{Kind: Subpath, Str: m.str(e.spelling(), e.origin), Origin: e.origin}
	}
	f = f.withText()
	if m.denyMemo == nil {
		m.denyMemo = map[entry]Filter{}
	}
	m.denyMemo[e] = f
	return f
}

// pinF is the filter of one directory kept in place, for what o protects
// below it.
func (m *emitter) pinF(p string, o policy.Origin) Filter {
	if root, ok := strings.CutPrefix(p, rootParents); ok {
		return Filter{Kind: Regex, Str: Str{param(rootParams[root][2])}, Origin: o, Pin: true}.withText()
	}
	return Filter{Kind: Literal, Str: m.str(p, policy.Origin{Key: "pin"}), Origin: o, Pin: true}.withText()
}

// network writes the network section (docs/reference.md#macos-network). A settings file always
// restricts the network (network.allowedDomains is required), so the
// unrestricted form "(allow network*)" never appears: only srt's proxies
// on 127.0.0.1 are reachable, plus what the flags open.
func (m *emitter) network(n policy.Network) {
	m.comment("Network: only srt's proxies on localhost")
	net := func(op string, f Filter) Rule {
		return Rule{Action: Allow, Ops: ops(op), Filters: []Filter{f}, Step: StepNetwork}
	}
	ip := func(k FilterKind, s Str, key string) Filter {
		return Filter{Kind: k, Str: s, Origin: policy.Origin{Key: key}}.withText()
	}
	if n.AllowLocalBinding {
		const key = "network.allowLocalBinding"
		m.add(net("network-bind", ip(LocalIP, text("*:*"), key)),
			net("network-inbound", ip(LocalIP, text("*:*"), key)),
			net("network-outbound", ip(RemoteIP, text("localhost:*"), key)))
	}
	unixSocket := Rule{Action: Allow, Ops: ops("system-socket"), Filters: []Filter{other("(socket-domain AF_UNIX)")}, Step: StepNetwork}
	switch {
	case n.AllowAllUnixSockets:
		o := policy.Origin{Key: "network.allowAllUnixSockets"}
		all := Filter{Kind: PathRegex, Str: Str{{Text: "^/", Raw: true}}, Origin: o}.withText()
		unixSocket.Filters[0].Origin = o
		m.add(unixSocket,
			net("network-bind", Filter{Kind: LocalUnix, Args: []Filter{all}, Origin: o}),
			net("network-outbound", Filter{Kind: RemoteUnix, Args: []Filter{all}, Origin: o}))
	case len(n.AllowUnixSockets) > 0:
		m.add(unixSocket)
		for _, r := range n.AllowUnixSockets {
			// Never a pattern (docs/reference.md#macos-pitfalls): "*" in a socket path is a name.
			r.Pattern, r.Literal, r.TrailingSeparator = false, true, false
			kept, dropped := m.allowEntries([]policy.PathRule{r}, socketAllow)
			for i, e := range kept {
				f := m.allowF(e) // a subpath, behind its parameter where it has one
				m.add(net("network-bind", Filter{Kind: LocalUnix, Args: []Filter{f}, Origin: f.Origin}))
				out := net("network-outbound", Filter{Kind: RemoteUnix, Args: []Filter{f}, Origin: f.Origin})
				if i == 0 {
					for _, d := range m.droppedFilters(dropped) {
						out.Dropped = append(out.Dropped, Filter{Kind: RemoteUnix, Args: []Filter{d}, Origin: d.Origin})
					}
				}
				m.add(out)
			}
		}
	}
	const httpKey, socksKey = "network.httpProxyPort", "network.socksProxyPort"
	httpPort := Str{{Text: "localhost:"}, param(ParamHTTPPort)}
	if n.HTTPProxyPort != 0 {
		httpPort = text("localhost:" + strconv.Itoa(n.HTTPProxyPort))
	}
	socksPort := Str{{Text: "localhost:"}, param(ParamSOCKSPort)}
	if n.SOCKSProxyPort != 0 {
		socksPort = text("localhost:" + strconv.Itoa(n.SOCKSProxyPort))
	}
	type port struct {
		s   Str
		key string
	}
	ports := []port{{httpPort, httpKey}, {socksPort, socksKey}}
	if socksPort.render() == httpPort.render() {
		ports = ports[:1] // one proxy serves both (docs/reference.md#macos-network)
	}
	for _, p := range ports {
		m.add(net("network-bind", ip(LocalIP, p.s, p.key)),
			net("network-inbound", ip(LocalIP, p.s, p.key)),
			net("network-outbound", ip(RemoteIP, p.s, p.key)))
	}
}
