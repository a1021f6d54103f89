package lint

import (
	"fmt"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/review/query"
)

// dangerousSockets are substrings of socket paths that hand out more than
// the sandbox allows.
var dangerousSockets = []struct{ needle, what string }{
	{"docker.sock", "the Docker daemon (root on the host)"},
	{"containerd", "containerd (root on the host)"},
	{"podman", "Podman"},
	{"cri-dockerd", "the Docker CRI shim"},
	{"crio.sock", "CRI-O"},
	{"buildkit", "BuildKit"},
	{"ssh-agent", "an ssh agent (the user's keys)"},
	{"agent.sock", "an agent (the user's keys)"},
	{"/ssh-", "an ssh agent (the user's keys)"},
	{"gpg-agent", "the gpg agent (the user's keys)"},
	{"S.gpg", "the gpg agent (the user's keys)"},
	{"/run/systemd/private", "systemd (the host's services)"},
	{"dbus", "D-Bus (the desktop's services)"},
}

// host: SRT105, SRT106 (with Options.Exists), SRT107, for the home and
// working directories of Options.
func (l *linter) host() {
	if l.opts.Home == "" || l.opts.Cwd == "" {
		return
	}
	if d, ok := policy.CwdHidden(l.p, l.opts.Home, l.opts.Cwd); ok {
		l.add("SRT107", d.Origin, "hides the working directory %s: srt cannot start a command there; run it from another directory, or open this one again with allowRead", l.opts.Cwd)
	}
	if l.opts.Exists == nil {
		return
	}
	for _, d := range policy.WriteDirs(l.p, l.opts.Home, l.opts.Cwd) {
		switch {
		case l.opts.Exists(d.Path):
		case d.Root != "" && !l.opts.Exists(d.Root):
			// A home or working directory that is not there (a test
			// fixture, another machine's paths): nothing to say.
		case d.Create:
			l.add("SRT105", d.Rule.Origin, "%s does not exist on this host; srt creates it (a directory) before the run", d.Path)
		default:
			l.add("SRT106", d.Rule.Origin, "%s does not exist on this host, and srt does not create it (%s): the command cannot write it; create it, or remove the entry", d.Path, d.Why)
		}
	}
}

// sockets: SRT110, SRT111.
func (l *linter) sockets() {
	n := &l.p.Network
	if n.AllowAllUnixSockets {
		l.addOn("SRT111", []query.Target{query.Linux, query.MacOS}, l.switchOrigin("network.allowAllUnixSockets"), "every unix socket is reachable, docker.sock and agent sockets included; list the sockets needed in allowUnixSockets (macOS) instead")
	}
	for _, r := range n.AllowUnixSockets {
		for _, d := range dangerousSockets {
			if p := r.Path.String(); strings.Contains(p, d.needle) || p == "/" || p == "/var/run" || p == "/run" {
				what := d.what
				if !strings.Contains(p, d.needle) {
					what = "every socket under it, docker.sock included"
				}
				l.addOn("SRT110", []query.Target{query.MacOS}, r.Origin, "allowUnixSockets %q reaches %s", r.Path, what)
				break
			}
		}
	}
}

// switches: SRT120, in a project-local file only.
func (l *linter) switches() {
	if !l.opts.ProjectLocal {
		return
	}
	pr := &l.p.Process
	for _, s := range []struct {
		key string
		on  bool
		why string
	}{
		{"allowAppleEvents", pr.AllowAppleEvents, "the command may script other applications (macOS), which run unsandboxed"},
		{"allowNestedUserNamespaces", pr.AllowNestedUserNamespaces, "the seccomp namespaces filter is off (Linux): mount and user namespaces inside the sandbox"},
		{"enableWeakerNestedSandbox", pr.EnableWeakerNestedSandbox, "bubblewrap runs without its own /proc (Linux)"},
		{"enableWeakerNetworkIsolation", pr.EnableWeakerNetworkIsolation, "trustd and a wider mach-lookup are reachable (macOS)"},
	} {
		if s.on {
			l.add("SRT120", l.switchOrigin(s.key), "%s: true in a project-local settings file: %s", s.key, s.why)
		}
	}
}

// publicSuffixes are domains under which anyone can get a host name:
// country second levels and hosting platforms.
var publicSuffixes = []string{
	"co.uk", "org.uk", "com.au", "co.jp", "co.nz", "com.br", "co.in", "com.cn",
	"github.io", "gitlab.io", "amazonaws.com", "s3.amazonaws.com", "cloudfront.net",
	"herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "workers.dev", "azurewebsites.net",
	"blob.core.windows.net", "appspot.com", "web.app", "firebaseapp.com", "ngrok.io", "ngrok-free.app",
	"trycloudflare.com", "glitch.me", "repl.co", "onrender.com", "fly.dev", "run.app",
}

// wildcards: SRT130.
func (l *linter) wildcards() {
	for _, r := range l.p.Network.Allowed {
		if !strings.HasPrefix(r.Host, "*.") {
			continue
		}
		base := r.Host[2:]
		if !strings.Contains(base, ".") {
			l.add("SRT130", r.Origin, "allowedDomains %q allows every host under the top-level domain %q", r.Entry, base)
			continue
		}
		for _, s := range publicSuffixes {
			if base == s || strings.HasSuffix(s, "."+base) {
				l.add("SRT130", r.Origin, "allowedDomains %q allows every host under %q, where anyone can have a host (data can leave through any of them); name the hosts", r.Entry, base)
				break
			}
		}
	}
	for _, r := range l.p.Network.AllowUnixSockets {
		if r.Path == policy.Abs.Path() {
			l.addOn("SRT130", []query.Target{query.MacOS}, r.Origin, "allowUnixSockets \"/\" allows every unix socket")
		}
	}
	for _, r := range userRules(l.p.Filesystem.AllowWrite) {
		if r.Pattern && r.Path.Root() == policy.Abs && strings.HasPrefix(r.Path.Rel(), "*") {
			l.add("SRT130", r.Origin, "allowWrite %q matches at the top of the file system", r.Path)
		}
	}
}

// shadows: SRT140, SRT141.
func (l *linter) shadows() {
	fs := &l.p.Filesystem
	// An allowRead reopens only inside a denyRead.
	denyAt := indexCovers(fs.DenyRead)
	for _, a := range userRules(fs.AllowRead) {
		inside := false
		for _, i := range denyAt.candidates(a.Path) {
			if fs.DenyRead[i].Covers(a.Path) {
				inside = true
				break
			}
		}
		if !inside {
			l.add("SRT140", a.Origin, "allowRead %q reopens nothing: it lies in no denyRead, and what no denyRead hides is readable already", a.Path)
		}
	}
	// A write root inside another write root.
	aw := userRules(fs.AllowWrite)
	awAt := indexPaths(aw)
	for i, a := range aw {
		for _, j := range awAt.covering(a.Path) {
			if b := aw[j]; i != j && a.Path != b.Path {
				l.add("SRT141", a.Origin, "allowWrite %q is inside allowWrite %q (%s)", a.Path, b.Path, b.Origin.Key)
				break
			}
		}
	}
	dr := userRules(fs.DenyRead)
	drAt := indexPaths(dr)
	l.reopeners = append(append([]policy.PathRule{}, fs.AllowRead...), userRules(fs.AllowWrite)...)
	l.reopenersAt = indexCovers(l.reopeners)
	for i, a := range dr {
		for _, j := range drAt.covering(a.Path) {
			if b := dr[j]; i != j && a.Path != b.Path && !l.reopenedBetween(b, a) {
				l.add("SRT141", a.Origin, "denyRead %q is inside denyRead %q (%s)", a.Path, b.Path, b.Origin.Key)
				break
			}
		}
	}
	// Network: an allow entry the deny list always refuses, or another
	// allow entry always decides first.
	n := &l.p.Network
	allowedAt := n.Allowed.Index()
	deniedAt := n.Denied.Index()
	for i, a := range n.Allowed {
		if a.Host == "*" || strings.HasPrefix(a.Host, "*.") {
			host := "x" + strings.TrimPrefix(a.Host, "*")
			if d, ok := deniedAt.Match(host, a.Port); ok && d.Port == 0 && (d.Host == "*" || strings.HasPrefix(d.Host, "*.") && strings.HasSuffix(a.Host, d.Host[1:])) {
				l.add("SRT140", a.Origin, "allowedDomains %q is unreachable: deniedDomains %q (%s) refuses every host it names", a.Entry, d.Entry, d.Origin.Key)
			}
			continue
		}
		if d, ok := deniedAt.Match(a.Host, a.Port); ok && (d.Port == 0 || d.Port == a.Port) {
			l.add("SRT140", a.Origin, "allowedDomains %q is unreachable: deniedDomains %q (%s) refuses it first", a.Entry, d.Entry, d.Origin.Key)
			continue
		}
		for _, j := range allowedAt.Candidates(a.Host) {
			b := n.Allowed[j]
			if i == j || strings.EqualFold(query.HostPort(a.Host, a.Port), query.HostPort(b.Host, b.Port)) {
				continue // the same rule: a duplicate (SRT150)
			}
			if (b.Port == 0 || b.Port == a.Port) && a.Port != 0 && b.Match(a.Host, a.Port) || b.Port == 0 && b.Match(a.Host, 1) && b.Match(a.Host, 443) {
				l.add("SRT141", a.Origin, "allowedDomains %q is covered by %q (%s)", a.Entry, b.Entry, b.Origin.Key)
				break
			}
		}
	}
}

// reopenedBetween reports whether an allow lies between outer deny b and
// inner deny a (then a is not redundant: it re-denies inside the allow).
func (l *linter) reopenedBetween(b, a policy.PathRule) bool {
	for _, i := range l.reopenersAt.candidates(a.Path) {
		if r := l.reopeners[i]; b.Covers(r.Path) && r.Covers(a.Path) {
			return true
		}
	}
	return false
}

// duplicates: SRT150.
func (l *linter) duplicates() {
	fs := &l.p.Filesystem
	for _, list := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, userRules(fs.AllowWrite), userRules(fs.DenyWrite), l.p.Network.AllowUnixSockets} {
		seen := map[string]policy.PathRule{}
		for _, r := range list {
			k := r.Path.String()
			if r.Literal {
				k += "\x00literal"
			}
			if first, ok := seen[k]; ok {
				l.add("SRT150", r.Origin, "%q is already listed at %s", r.Path, where(first.Origin))
				continue
			}
			seen[k] = r
		}
	}
	for _, list := range []policy.HostList{l.p.Network.Allowed, l.p.Network.Denied} {
		seen := map[string]policy.HostRule{}
		for _, r := range list {
			k := strings.ToLower(query.HostPort(r.Host, r.Port))
			if first, ok := seen[k]; ok {
				l.add("SRT150", r.Origin, "%q is already listed as %q at %s", r.Entry, first.Entry, where(first.Origin))
				continue
			}
			seen[k] = r
		}
	}
}

func where(o policy.Origin) string {
	if o.Pos != "" {
		return o.Key + " (" + o.Pos + ")"
	}
	return o.Key
}

// globs: SRT170, SRT171.
func (l *linter) globs() {
	fs := &l.p.Filesystem
	lists := []struct {
		name  string
		rules []policy.PathRule
		deny  bool
	}{{"denyRead", fs.DenyRead, true}, {"allowRead", fs.AllowRead, false}, {"allowWrite", userRules(fs.AllowWrite), false}, {"denyWrite", userRules(fs.DenyWrite), true}}
	for _, list := range lists {
		for _, r := range list.rules {
			p := r.Path.String()
			if r.Literal && strings.ContainsAny(p, "*?") {
				l.addOn("SRT170", []query.Target{query.Windows}, r.Origin, "%s %q: Windows skips a literal entry containing * or ?", list.name, r.Path)
			}
			if r.TrailingSeparator && !list.deny {
				l.addOn("SRT170", []query.Target{query.MacOS}, r.Origin, "%s %q ends in a separator: on macOS %s; on Linux it is %s; drop the trailing / to grant the matches on every platform",
					list.name, p+"/", "the rule matches nothing (Seatbelt never checks a path ending in /, as in the reference)", "dropped (each match, file or directory, with its contents)")
			}
			if !r.Pattern {
				continue
			}
			if first, _, _ := strings.Cut(r.Path.Rel(), "/"); r.Path.Root() == policy.Abs && strings.ContainsAny(first, "*?[]") {
				l.addOn("SRT170", []query.Target{query.Linux}, r.Origin, "%s %q starts with a wildcard: Linux expands globs from a literal directory, so srt refuses to start; begin with a directory (~/, ./ or an absolute one)", list.name, r.Path)
			}
			if !strings.ContainsAny(p, "*?") {
				l.addOn("SRT170", []query.Target{query.Windows}, r.Origin, "%s %q: Windows reads [ ] as literal text when the entry has no * or ?, so it names one path there and a set of characters elsewhere", list.name, r.Path)
			}
			if list.deny {
				l.addOn("SRT171", []query.Target{query.Linux, query.Windows}, r.Origin, "%s %q is expanded when the sandbox starts: matching files created later are not covered (macOS matches them)", list.name, r.Path)
			}
		}
	}
	for _, r := range l.p.Network.AllowUnixSockets {
		if strings.ContainsAny(r.Path.String(), "*?[]") {
			l.addOn("SRT170", []query.Target{query.MacOS}, r.Origin, "allowUnixSockets %q: socket paths are never globs, macOS reads it literally", r.Path)
		}
	}
}

// neverMatch: SRT180.
func (l *linter) neverMatch() {
	for _, r := range l.p.Network.Denied {
		if r.Host == "*" || strings.HasPrefix(r.Host, "*.") {
			continue
		}
		canon, err := policy.CanonicalHost(r.Host)
		if err == nil && canon != strings.ToLower(r.Host) {
			l.add("SRT180", r.Origin, "deniedDomains %q never matches: destinations are compared in canonical form (%q), and deny entries are not canonicalised; write %q", r.Entry, canon, query.HostPort(canon, r.Port))
		}
	}
	fs := &l.p.Filesystem
	if fs.Disabled {
		return
	}
	aw := userRules(fs.AllowWrite)
	awAt := indexPaths(aw)
	awPattern := false
	var awPaths []string
	for _, a := range aw {
		awPattern = awPattern || a.Pattern
		awPaths = append(awPaths, a.Path.String())
	}
	sort.Strings(awPaths)
	for _, d := range userRules(fs.DenyWrite) {
		// A write root at or above the deny, or one below it (a literal
		// deny covers what lies below its path), or a glob on either side.
		reach := len(aw) > 0 && (d.Pattern || awPattern || d.Path == policy.Abs.Path() || len(awAt.covering(d.Path)) > 0 || hasBelow(awPaths, d.Path.String()))
		for _, a := range fs.AllowWrite {
			if a.Origin == policy.Default && a.Covers(d.Path) {
				reach = true
			}
		}
		if !reach {
			l.add("SRT180", d.Origin, "denyWrite %q never matches anything writable: no allowWrite root is at, above or below it (writes are allow-only)", d.Path)
		}
	}
	type spelled struct {
		path    policy.Path
		literal bool
	}
	lifts := map[spelled][]policy.PathRule{}
	for _, a := range fs.AllowRead {
		k := spelled{a.Path, a.Literal}
		lifts[k] = append(lifts[k], a)
	}
	for _, d := range fs.DenyRead {
		for _, a := range lifts[spelled{d.Path, d.Literal}] {
			if !strings.HasPrefix(d.Origin.Key, "credentials.") {
				l.addOn("SRT180", []query.Target{query.Linux, query.MacOS}, d.Origin, "denyRead %q is lifted whole by allowRead %q (%s): it hides nothing (Windows: the deny wins)", d.Path, a.Path, a.Origin.Key)
			}
		}
	}
}

// masks: SRT190.
func (l *linter) masks() {
	if l.p.Network.TLSTerminate {
		return
	}
	for _, v := range l.p.Env.Mask {
		l.add("SRT190", v.Origin, "credentials.envVars %q is masked without network.tlsTerminate: the proxy injects the real value into plaintext traffic", v.Name)
	}
	for _, r := range l.p.Filesystem.CredentialMasks {
		l.add("SRT190", r.Origin, "credentials.files %q is masked without network.tlsTerminate: the proxy injects the real values into plaintext traffic", r.Path)
	}
}

// credentials: SRT191, SRT192, SRT193, SRT194.
func (l *linter) credentials() {
	type masked struct {
		what string
		m    policy.Masking
		o    policy.Origin
	}
	var ms []masked
	for _, v := range l.p.Env.Mask {
		ms = append(ms, masked{fmt.Sprintf("credentials.envVars %q", v.Name), v.Masking, v.Origin})
	}
	for _, r := range l.p.Filesystem.CredentialMasks {
		if r.Mask != nil {
			ms = append(ms, masked{fmt.Sprintf("credentials.files %q", r.Path), *r.Mask, r.Origin})
		}
	}
	// The allowed hosts, read once: every credential without injectHosts
	// sends its value to them all.
	var hosts, wild []string
	seen := map[string]bool{}
	for _, r := range l.p.Network.Allowed {
		if seen[r.Host] {
			continue
		}
		seen[r.Host] = true
		hosts = append(hosts, r.Host)
		if strings.HasPrefix(r.Host, "*") {
			wild = append(wild, r.Host)
		}
	}
	for _, c := range ms {
		for _, r := range c.m.BodyInjectHosts {
			l.add("SRT194", r.Origin, "%s sends its real value into the request bodies and every header field of %s (bodyInjectHosts): whatever that host keeps, the command can read back, in pieces or re-encoded, where srt cannot recognise it; and every response of every host is then read whole (no Range, no compression, no WebSocket). Send the credential in a header that carries credentials instead, if the API takes one", c.what, r.Entry)
		}
		if c.m.InjectHosts != nil {
			for _, r := range c.m.InjectHosts {
				if h := r.Entry; strings.HasPrefix(h, "*") {
					l.add("SRT191", c.o, "%s sends its real value to every host under %q (injectHosts): name the hosts that need it", c.what, strings.TrimPrefix(h, "*."))
				}
			}
			continue
		}
		switch {
		case len(wild) > 0:
			l.add("SRT191", c.o, "%s has no injectHosts, so its real value goes to every allowedDomains host, and so to every host under %s: set injectHosts to the hosts that need it", c.what, query.Some(wild, "network.allowedDomains"))
		case len(hosts) > 1:
			l.add("SRT192", c.o, "%s has no injectHosts, so its real value goes to every allowedDomains host (%s): set injectHosts to the hosts that need it", c.what, query.Some(hosts, "network.allowedDomains"))
		}
	}
	fs := &l.p.Filesystem
	if fs.Disabled {
		return // SRT102 says it: nothing is protected
	}
	var files []policy.PathRule
	for _, r := range fs.DenyRead {
		if strings.HasPrefix(r.Origin.Key, "credentials.files") {
			files = append(files, r)
		}
	}
	files = append(files, fs.CredentialMasks...)
	for _, r := range files {
		for _, t := range query.Targets {
			if r.Mask == nil || t != query.Linux {
				if d := l.e.Read(r.Path.String(), t); d.Allow {
					l.addOn("SRT193", []query.Target{t}, r.Origin, "credentials.files %q is readable by the command on %s: %s (%s)", r.Path, t, d.Why, d.Rule.Key)
				}
			}
			if d := l.e.Write(r.Path.String(), t); d.Allow {
				l.addOn("SRT193", []query.Target{t}, r.Origin, "credentials.files %q can be changed or replaced by the command on %s (%s): the next program that reads it outside the sandbox trusts what the command wrote; add it to denyWrite", r.Path, t, d.Rule.Key)
			}
		}
	}
}

// notGranted: SRT172. An allowWrite or allowRead entry that decides the
// Linux answer for its own path, where macOS answers deny.
func (l *linter) notGranted() {
	fs := &l.p.Filesystem
	if fs.Disabled {
		return
	}
	check := func(list string, rules []policy.PathRule, ask func(string, query.Target) query.Decision) {
		for _, r := range userRules(rules) {
			if r.Pattern {
				continue
			}
			lin, mac := ask(r.Path.String(), query.Linux), ask(r.Path.String(), query.MacOS)
			if lin.Allow && lin.Rule == r.Origin && !mac.Allow {
				l.addOn("SRT172", []query.Target{query.MacOS}, r.Origin, "%s %q grants nothing on macOS: %s", list, r.Path, mac.Why)
			}
		}
	}
	check("allowWrite", fs.AllowWrite, l.e.Write)
	check("allowRead", fs.AllowRead, l.e.Read)
}

// A pathIndex finds the literal rules of a list (not globs) that cover a
// path: the rule's path is the path or one of its ancestors, or "/"
// (compiler.Covers for a rule without glob characters).
type pathIndex map[policy.Path][]int

func indexPaths(rs []policy.PathRule) pathIndex {
	x := pathIndex{}
	for i, r := range rs {
		if !r.Pattern {
			x[r.Path] = append(x[r.Path], i)
		}
	}
	return x
}

// covering returns, in list order, the literal rules that cover p.
func (x pathIndex) covering(p policy.Path) []int {
	var out []int
	last := p
	for a, ok := p, true; ok; a, ok = a.Parent() {
		out = append(out, x[a]...)
		last = a
	}
	if last != policy.Abs.Path() {
		out = append(out, x[policy.Abs.Path()]...) // "/" covers every root
	}
	sort.Ints(out)
	return out
}

// A coverIndex finds the rules of a list, globs included, that may cover
// a path (compiler.Covers): the literal ones as pathIndex does, and each
// glob under the directory its text before the first wildcard ends in,
// which is an ancestor of every path it matches. The candidates are a
// superset, in list order: ask compiler.Covers of each.
type coverIndex struct {
	literal pathIndex
	globs   pathIndex  // by base directory
	pieces  [][]string // of each glob, the texts a path it covers holds (policy.LiteralPieces)
}

func indexCovers(rs []policy.PathRule) coverIndex {
	x := coverIndex{literal: indexPaths(rs), globs: pathIndex{}, pieces: make([][]string, len(rs))}
	for i, r := range rs {
		if !r.Pattern {
			continue
		}
		x.pieces[i] = policy.LiteralPieces(r.Path.String())
		base := globBase(r.Path)
		x.globs[base] = append(x.globs[base], i)
	}
	return x
}

// globBase is the directory the text of glob p before its first wildcard
// ends in, an ancestor of every path it matches: its elements before the
// first with a wildcard, or, with none, its parent.
func globBase(p policy.Path) policy.Path {
	segs := strings.Split(p.Rel(), "/")
	for i, s := range segs {
		if strings.ContainsAny(s, "*?[") {
			return p.Root().Join(strings.Join(segs[:i], "/"))
		}
	}
	if dir, ok := p.Parent(); ok {
		return dir
	}
	return p
}

// candidates returns, in list order, the rules that may cover p: a glob
// only when p holds each of its literal texts.
func (x coverIndex) candidates(p policy.Path) []int {
	out := x.literal.covering(p)
	text := p.String()
next:
	for _, i := range x.globs.covering(p) {
		for _, piece := range x.pieces[i] {
			if !strings.Contains(text, piece) {
				continue next
			}
		}
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// hasBelow reports whether sorted holds a path strictly below dir.
func hasBelow(sorted []string, dir string) bool {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	i := sort.SearchStrings(sorted, prefix)
	return i < len(sorted) && strings.HasPrefix(sorted[i], prefix)
}
