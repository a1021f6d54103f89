package query

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// Target is a platform whose sandbox semantics an answer follows
// (policy.Target, the type the artifacts use).
type Target = policy.Target

// The targets.
const (
	Linux   = policy.TargetLinux
	MacOS   = policy.TargetMacOS
	Windows = policy.TargetWindows
)

// Targets are all targets, in the order reports list them.
var Targets = []Target{Linux, MacOS, Windows}

// ParseTargets parses a comma-separated list of targets; "" or "all" is
// every target.
func ParseTargets(s string) ([]Target, error) {
	if s == "" || s == "all" {
		return Targets, nil
	}
	var out []Target
	for _, f := range strings.Split(s, ",") {
		t := Target(strings.TrimSpace(f))
		if !slices.Contains(Targets, t) {
			return nil, fmt.Errorf("unknown target %q: use linux, macos, windows or all", f)
		}
		out = append(out, t)
	}
	return out, nil
}

// A Decision is the answer to one question on one target.
type Decision struct {
	Allow bool `json:"allow"`
	// Rule is the setting that decided: a settings key with its position,
	// or policy.Default or policy.Mandatory.
	Rule policy.Origin `json:"rule"`
	// Why says in a few words how the rule applies on the target.
	Why string `json:"why"`
}

// Verdict is "allow" or "deny".
func (d Decision) Verdict() string {
	if d.Allow {
		return "allow"
	}
	return "deny"
}

// Options are the host facts a question may be asked with. The zero value
// asks symbolically: paths are compared with ${HOME} and ${CWD} as
// written, and a query path under /home/me does not meet a rule under
// ${HOME}.
type Options struct {
	// Home and Cwd, when set, replace ${HOME} and ${CWD} in the rules and
	// in the questions, so that concrete paths can be asked about.
	Home, Cwd string
	// Exists, when set, says whether a path exists on the host now. Linux
	// protects the dangerous names below the working directory only where
	// its start-up scan finds them; with Exists the Linux answer for such
	// a name is exact for a start now, without it the name is assumed to
	// exist (and the answer says so). On macOS an allow under /tmp, /var
	// or /etc, or with "..", holds only where a path exists when srt
	// starts (the program's probes, seatbelt.Program.Probes); Exists is
	// then asked whether it resolves to itself or its /private form, as
	// realpath would adopt it.
	Exists func(path string) bool
}

// Evaluator answers questions about one policy.
type Evaluator struct {
	p    *policy.Policy
	opts Options
	net  *lazyRules
	idx  *indexes
	// linear makes every rule a candidate for every question: the
	// reading before the indexes, which the tests compare them with.
	linear bool
}

// lazyRules are the network rules of the policy, made on first use (with
// their indexes, once for every question).
type lazyRules struct {
	once sync.Once
	r    *netpolicy.Rules

	routes      sync.Once
	mitmDomains *mitmIndex
	noProxy     policy.NoProxy
}

// mitm and noProxy are the mitmProxy domains and the parent proxy's
// noProxy list, read once for every question.
func (e *Evaluator) mitm() *mitmIndex {
	e.readRoutes()
	return e.net.mitmDomains
}

func (e *Evaluator) noProxy() policy.NoProxy {
	e.readRoutes()
	return e.net.noProxy
}

func (e *Evaluator) readRoutes() {
	if e.net == nil {
		e.net = &lazyRules{}
	}
	e.net.routes.Do(func() {
		n := &e.p.Network
		if n.MitmProxy != nil {
			e.net.mitmDomains = newMitmIndex(n.MitmProxy)
		}
		if n.ParentProxy != nil {
			e.net.noProxy = policy.ParseNoProxy(n.ParentProxy.NoProxy)
		}
	})
}

// New returns an evaluator of p. p must not change while it is used.
func New(p *policy.Policy, opts Options) *Evaluator {
	return &Evaluator{p: p, opts: opts, net: &lazyRules{}, idx: &indexes{}}
}

// rules are the rules the proxies would enforce.
func (e *Evaluator) rules() *netpolicy.Rules {
	n := &e.p.Network
	make := func() *netpolicy.Rules {
		return &netpolicy.Rules{Allowed: n.Allowed, Denied: n.Denied, DeniedReasons: n.DeniedReasons, Strict: n.StrictAllowlist}
	}
	if e.net == nil {
		return make()
	}
	e.net.once.Do(func() { e.net.r = make() })
	return e.net.r
}

// Policy returns the policy e answers about.
func (e *Evaluator) Policy() *policy.Policy { return e.p }

// switchOrigin is the Origin of a settings switch: where the policy's
// file set it, or the key alone.
func (e *Evaluator) switchOrigin(key string) policy.Origin {
	if o, ok := e.p.Switches[key]; ok {
		return o
	}
	return policy.Origin{Key: key}
}

// Path turns a path as a user writes it (~/x, ./src, /etc) into the form
// rules are compared in: symbolic, or concrete when Options name the
// directories. It never reads it as a pattern.
func (e *Evaluator) Path(spelling string) string {
	if e.p.Windows != nil {
		return e.windowsPath(spelling)
	}
	p, _ := policy.Normalize(spelling, true)
	return e.expand(p)
}

// expand is p in the form rules are compared in: with its root filled in
// and cleaned where the options name the root's directory, as written
// (symbolic) where they do not, and an absolute path as written.
func (e *Evaluator) expand(p policy.Path) string {
	if e.p.Windows != nil {
		return e.expandWindows(p)
	}
	if !p.Root().Symbolic() {
		return p.String()
	}
	if s, ok := p.Expand(e.opts.Home, e.opts.Cwd); ok {
		return path.Clean(s)
	}
	return p.String()
}

// asPath reads p, a path in the form rules are compared in, as a policy
// path for the matchers (policy.PathRule.Covers), cleaned as a host
// would ("C://x" is C:/x); ok is false for a spelling that names no path
// (a question as written that starts at no root).
func asPath(p string) (policy.Path, bool) {
	x, err := policy.CleanPath(p)
	return x, err == nil
}

// Connect answers whether the proxies let the command connect to
// host:port, on target t. The proxies are the same on every target; t
// only selects the wording. A port of 0 means 443.
func (e *Evaluator) Connect(host string, port int, t Target) Decision {
	if port == 0 {
		port = 443
	}
	n := &e.p.Network
	r := e.rules()
	// No ask callback and no per-command lists: the CLI installs neither
	// (docs/reference.md#network-decision), so what no rule allows is denied.
	d := netpolicy.Decide(context.Background(), r, host, port, "")
	switch {
	case d.Rule != nil && d.Allow:
		return Decision{Allow: true, Rule: d.Rule.Origin, Why: "allowed by the allow list; " + e.routeWhy(d.Host, port) + externalWhy(n)}
	case d.Rule != nil:
		return Decision{Rule: d.Rule.Origin, Why: d.Reason + externalWhy(n)}
	case d.Cause == netpolicy.CauseMalformed:
		return Decision{Rule: policy.Default, Why: "malformed host: refused before any rule" + externalWhy(n)}
	}
	return Decision{Rule: policy.Default, Why: "no allowedDomains entry matches; what no rule allows is denied" + externalWhy(n)}
}

// routeWhy says how the proxies reach an allowed host (canonical): through
// the mitmProxy socket, through the parent proxy the settings name, or
// directly (dialWhy). A parent proxy srt finds in its own environment at
// run time (HTTP_PROXY, HTTPS_PROXY) is not known here.
func (e *Evaluator) routeWhy(host string, port int) string {
	n := &e.p.Network
	if m := n.MitmProxy; m != nil && e.mitm().match(host) {
		return "sent to the mitmProxy on " + m.SocketPath + ", which resolves and connects itself (no resolved-address guard), with no other route when that socket fails"
	}
	if pp := n.ParentProxy; pp != nil && (pp.HTTP != "" || pp.HTTPS != "") && !policy.IsLoopbackHost(host) && !e.noProxy().Match(host) {
		return "sent through network.parentProxy, which resolves and connects itself (no resolved-address guard)"
	}
	return dialWhy(host, port)
}

// externalWhy qualifies a verdict of srt's proxies when an external proxy
// serves one protocol or both: that traffic is the external proxy's to
// decide.
func externalWhy(n *policy.Network) string {
	switch h, s := n.HTTPProxyPort, n.SOCKSProxyPort; {
	case h != 0 && s != 0:
		return fmt.Sprintf("; but srt runs no proxy here: HTTP and SOCKS traffic goes to the user's proxies on host loopback ports %d and %d (httpProxyPort, socksProxyPort), which decide for themselves", h, s)
	case h != 0:
		return fmt.Sprintf("; this is srt's SOCKS proxy's verdict: HTTP and HTTPS proxy traffic goes to the user's proxy on host loopback port %d (httpProxyPort), which decides for itself", h)
	case s != 0:
		return fmt.Sprintf("; this is srt's HTTP proxy's verdict: SOCKS traffic goes to the user's proxy on host loopback port %d (socksProxyPort), which decides for itself", s)
	}
	return ""
}

// dialWhy says where the proxy dials an allowed host (canonical), as the
// resolved-address guard (compiler/policy/netpolicy Guard) decides: a literal as
// written, a localhost name only at loopback, any other name only at an
// address that passes the guard. The proxies run on the host, outside the
// sandbox's network namespace, so loopback there is the host's.
func dialWhy(host string, port int) string {
	if a, err := netip.ParseAddr(host); err == nil {
		if isLoopback(a) {
			return fmt.Sprintf("an IP literal is dialled as written, without the address guard: this reaches the host's own loopback (a server listening on the host at port %d)", port)
		}
		return "an IP literal is dialled as written, without the address guard"
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Sprintf("a localhost name is dialled only at a loopback address, which is the host's own loopback (a server listening on the host at port %d is reached)", port)
	}
	return "dialled only at an address that passes the guard: a name that resolves to loopback, link-local, a metadata address, one of this host's addresses or deniedResolvedAddresses is refused, unless that address is itself allow-listed as an IP literal"
}

// isLoopback reports whether a is a loopback address, or an IPv6 address
// that carries one (::ffff:127.0.0.1).
func isLoopback(a netip.Addr) bool {
	return a.IsLoopback() || a.Is4In6() && a.Unmap().IsLoopback()
}

// HostLoopback returns the allowedDomains entries through which the
// command reaches the host's own loopback (by way of the proxies, which
// run on the host): localhost names, loopback literals and "*".
func (e *Evaluator) HostLoopback() []string {
	var out []string
	for _, r := range e.p.Network.Allowed {
		h := strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]")
		a, err := netip.ParseAddr(h)
		if h == "*" || h == "localhost" || strings.HasSuffix(h, ".localhost") || err == nil && isLoopback(a) {
			out = append(out, r.Entry)
		}
	}
	return out
}

// SplitHostPort splits "host", "host:port" or "[v6]:port"; no port is 0.
func SplitHostPort(s string) (string, int, error) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("%q: port must be 1-65535", s)
		}
		return h, n, nil
	}
	if strings.Count(s, ":") == 1 {
		return "", 0, fmt.Errorf("%q: port must be 1-65535", s)
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), 0, nil
}
