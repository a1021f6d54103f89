package sandbox

// The upstream routes of the proxies (runtime/proxy upstream.go): the
// parent proxy, captured once at start, and the mitmProxy route, which a
// live update may change.

import (
	"fmt"
	"log/slog"
	"os"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
)

// parentProxy resolves network.parentProxy, falling back to getenv (nil:
// this process's environment), and says in the debug log what it found.
func parentProxy(p *policy.Policy, getenv func(string) string, log *slog.Logger) *proxy.Parent {
	if getenv == nil {
		getenv = os.Getenv
	}
	var h, hs, np string
	if pp := p.Network.ParentProxy; pp != nil {
		h, hs, np = pp.HTTP, pp.HTTPS, pp.NoProxy
	}
	parent, notes := proxy.ParentFrom(h, hs, np, getenv)
	if log != nil {
		for _, n := range notes {
			log.Debug(n)
		}
		if parent != nil {
			log.Debug("parent proxy: allowed connections leave through it (loopback and NO_PROXY destinations go direct); it resolves the names it is given, so the resolved-address guard does not apply to them", "parent", parent.String())
		}
	}
	return parent
}

// mitmRoute is the policy's mitmProxy route, nil for none.
func mitmRoute(p *policy.Policy) *proxy.Mitm {
	m := p.Network.MitmProxy
	if m == nil {
		return nil
	}
	return &proxy.Mitm{SocketPath: m.SocketPath, Domains: append(policy.HostList(nil), m.Domains...)}
}

// mitmConflict refuses network.tlsTerminate together with
// network.mitmProxy: both would intercept the same connections.
func mitmConflict(p *policy.Policy) error {
	n := p.Network
	if n.MitmProxy == nil || !n.TLSTerminate {
		return nil
	}
	src := p.Source
	if src == "" {
		src = "the settings"
	}
	return fmt.Errorf("%s: network.tlsTerminate and network.mitmProxy cannot be used together (both would intercept the same TLS connections): remove one of them", src)
}
