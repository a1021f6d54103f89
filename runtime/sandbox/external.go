package sandbox

// External proxy ports (network.httpProxyPort, network.socksProxyPort):
// the user runs a proxy of their own on a loopback port of the host, and
// srt runs none for that protocol. The command is pointed at it without
// srt's credentials; on Linux its listener inside the sandbox's network
// namespace relays to that one host port, and nothing else.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
)

// externalNote says, for the debug log, what an external proxy port means
// for the command's traffic, one line per external port.
func externalNote(n policy.Network) []string {
	var out []string
	for _, x := range []struct {
		key, what string
		port      int
	}{{"network.httpProxyPort", "HTTP proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY)", n.HTTPProxyPort}, {"network.socksProxyPort", "SOCKS proxy (FTP_PROXY, RSYNC_PROXY)", n.SOCKSProxyPort}} {
		if x.port != 0 {
			out = append(out, fmt.Sprintf("%s %d: the command's %s traffic goes to the proxy on this host's loopback port %d, which must do its own filtering: srt's allowedDomains and deniedDomains, per-command lists and the ask callback do not apply to it, and srt records no violations for it", x.key, x.port, x.what, x.port))
		}
	}
	return out
}

// externalEnv removes srt's credentials from the proxy variables of a
// protocol that an external proxy serves (it does its own
// authentication): the URLs that point at httpPort (or socksPort) lose
// their user and password, and the variables that exist only to carry
// srt's token go.
func externalEnv(env []string, n policy.Network, httpPort, socksPort int) []string {
	if n.HTTPProxyPort == 0 && n.SOCKSProxyPort == 0 {
		return env
	}
	external := map[string]bool{}
	if n.HTTPProxyPort != 0 {
		external[strconv.Itoa(httpPort)] = true
	}
	if n.SOCKSProxyPort != 0 {
		external[strconv.Itoa(socksPort)] = true
	}
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if n.HTTPProxyPort != 0 {
			switch k {
			case "GIT_CONFIG_PARAMETERS", "CLOUDSDK_PROXY_USERNAME", "CLOUDSDK_PROXY_PASSWORD":
				continue
			}
		}
		if u, err := url.Parse(v); err == nil && u.User != nil && u.Hostname() == "localhost" && external[u.Port()] {
			u.User = nil
			kv = k + "=" + u.String()
		}
		out = append(out, kv)
	}
	return out
}

// serveProxies serves the command's two listeners until ctx ends or stop
// is called: srt's own proxy for a protocol, or, for one an external
// proxy serves, a relay to its host loopback port. stop closes the
// listeners and every connection they carry, and returns once all of
// their goroutines have.
func serveProxies(ctx context.Context, e *proxy.Egress, n policy.Network, httpL, socksL net.Listener, log *slog.Logger) (stop func()) {
	var serves []func(context.Context) error
	if n.HTTPProxyPort != 0 {
		serves = append(serves, relay(httpL, n.HTTPProxyPort, log))
	} else {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.HTTP{Egress: e}).Serve(ctx, httpL) })
	}
	if n.SOCKSProxyPort != 0 {
		serves = append(serves, relay(socksL, n.SOCKSProxyPort, log))
	} else {
		serves = append(serves, func(ctx context.Context) error { return (&proxy.SOCKS{Egress: e}).Serve(ctx, socksL) })
	}
	return serving(ctx, serves...)
}

// serving runs each serve on a goroutine of its own with a context that
// stop ends (as ctx does); stop returns once every serve has.
func serving(ctx context.Context, serves ...func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, serve := range serves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			serve(ctx)
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// relay returns the server that joins each connection accepted on l to a
// new connection to the host's loopback port (127.0.0.1, else ::1): the
// only place it reaches.
func relay(l net.Listener, port int, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		return proxy.Relay(ctx, l, func(ctx context.Context) (net.Conn, error) { return dialLoopback(ctx, port) }, func(err error) {
			if log != nil {
				log.Debug("external proxy not reachable", "port", port, "err", err)
			}
		})
	}
}

func dialLoopback(ctx context.Context, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err == nil {
		return c, nil
	}
	if c6, err6 := d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err6 == nil {
		return c6, nil
	}
	return nil, err
}
