package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"srt.dev/cmd/internal/cmdline"
	"strconv"
	"strings"
	"syscall"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/buildversion"
	"srt.dev/internal/periodic"
	"srt.dev/internal/pollread"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/proxy/decider"
)

type proxyOptions struct {
	listen                                     string
	listenAny, plaintextHeaderSet, debug       bool
	listenFD, deciderFD, deciderIn, deciderOut int
	lifelineFD, caFD                           int
	strip                                      []string
	rssEvery                                   time.Duration
}

// parseProxy reads srt proxy's flags; an error is a usage error.
func parseProxy(args []string, getenv func(string) string) (*proxyOptions, error) {
	o := &proxyOptions{listenFD: -1, deciderFD: -1, deciderIn: -1, deciderOut: -1, lifelineFD: -1, caFD: -1}
	fds := map[string]*int{"--listen-fd": &o.listenFD, "--decider-fd": &o.deciderFD, "--decider-in": &o.deciderIn,
		"--decider-out": &o.deciderOut, "--lifeline-fd": &o.lifelineFD, "--ca-fd": &o.caFD}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		flag := func(b *bool) error {
			if hasValue {
				return fmt.Errorf("%s takes no value", name)
			}
			*b = true
			return nil
		}
		var err error
		switch {
		case fds[name] != nil:
			var v string
			if v, err = next(); err == nil {
				if *fds[name] >= 0 {
					err = fmt.Errorf("%s given twice", name)
				} else {
					*fds[name], err = parseProxyFD(name, v)
				}
			}
		case name == "--listen":
			if o.listen != "" {
				err = errors.New("--listen given twice")
			} else if o.listen, err = next(); err == nil && o.listen == "" {
				err = errors.New("--listen needs HOST:PORT")
			}
		case name == "--strip-response-header":
			var v string
			if v, err = next(); err == nil {
				for _, n := range strings.Split(v, ",") {
					if n = strings.TrimSpace(n); n == "" {
						err = fmt.Errorf("--strip-response-header %q names an empty header", v)
					} else {
						o.strip = append(o.strip, n)
					}
				}
			}
		case name == "--listen-any-interface":
			err = flag(&o.listenAny)
		case name == "--plaintext-header-set":
			err = flag(&o.plaintextHeaderSet)
		case name == "--debug":
			err = flag(&o.debug)
		default:
			err = fmt.Errorf("unknown argument %q", args[i])
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case (o.listen == "") == (o.listenFD < 0):
		return nil, errors.New("give one of --listen HOST:PORT and --listen-fd N")
	case o.listenAny && o.listen == "":
		return nil, errors.New("--listen-any-interface goes with --listen")
	case o.deciderFD >= 0 && (o.deciderIn >= 0 || o.deciderOut >= 0):
		return nil, errors.New("give --decider-fd, or --decider-in and --decider-out, not both")
	case o.deciderFD < 0 && (o.deciderIn < 0 || o.deciderOut < 0):
		return nil, errors.New("give --decider-fd N (a socket), or both --decider-in N and --decider-out N")
	}
	if v := getenv("SRT_PROXY_REPORT_RSS_MS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("SRT_PROXY_REPORT_RSS_MS must be a positive number of milliseconds, not %q", v)
		}
		o.rssEvery = time.Duration(n) * time.Millisecond
	}
	return o, nil
}

func parseProxyFD(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || v[0] == '+' || v[0] == '-' || n < 0 {
		return 0, fmt.Errorf("%s must be a file descriptor number, not %q", name, v)
	}
	return n, nil
}

// proxyListener opens what --listen or --listen-fd names.
func proxyListener(o *proxyOptions, stderr io.Writer) (net.Listener, error) {
	if o.listenFD >= 0 {
		f := os.NewFile(uintptr(o.listenFD), "listen-fd")
		l, err := net.FileListener(f)
		f.Close() // l holds its own descriptor
		if err != nil {
			return nil, fmt.Errorf("--listen-fd %d is not a listening socket: %w", o.listenFD, err)
		}
		return l, nil
	}
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return nil, proxyUsageError(fmt.Errorf("--listen %q: %w", o.listen, err))
	}
	a, err := netip.ParseAddr(host)
	loopback := host == "localhost" || err == nil && a.IsLoopback()
	if !loopback && !o.listenAny {
		return nil, proxyUsageError(fmt.Errorf("--listen %q is not a loopback address: anyone who can reach it could use the proxy; add --listen-any-interface if that is meant", o.listen))
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, err
	}
	if !loopback {
		_, port, _ := net.SplitHostPort(l.Addr().String())
		fmt.Fprintf(stderr, "%swarning: listening on %s, which is not loopback: anyone who can reach it can use this proxy\n", proxyPrefix, net.JoinHostPort(host, port))
	}
	return l, nil
}

// proxyUsageError is an error in srt proxy's command line.
func proxyUsageError(err error) error {
	return (&failure{err: fmt.Errorf("%w (see srt proxy --help)", err)}).withStatus(exitProxyUsage)
}

// proxyCmd runs srt proxy.
func proxyCmd(args []string, stdout, stderr io.Writer) (int, error) {
	// --version prints the version and does nothing else, whatever the
	// other arguments are (docs/srt-proxy.md).
	for _, a := range args {
		if a == "--version" {
			fmt.Fprintln(stdout, "srt-proxy "+buildversion.Version(version))
			return 0, nil
		}
	}
	for _, a := range args {
		if a == "-h" || a == "--help" {
			fmt.Fprint(stdout, cmdline.Named("proxy").Help())
			return 0, nil
		}
	}
	o, err := parseProxy(args, os.Getenv)
	if err != nil {
		return 0, proxyUsageError(err)
	}
	return 0, serveProxy(o, stderr)
}

// serveProxy runs the proxy until the lifeline closes, a signal comes, or
// the decider goes (an error). It returns once every goroutine it started
// has (the decider link's own aside).
func serveProxy(o *proxyOptions, stderr io.Writer) error {
	var log *slog.Logger
	if o.debug {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The lifeline and signals count from the start: a parent that goes
	// before the decider's hello must not leave the proxy waiting.
	lifeline, stopLifeline, err := watchLifeline(o.lifelineFD)
	if err != nil {
		return err
	}
	defer stopLifeline()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if o.rssEvery > 0 {
		defer reportRSS(o.rssEvery, stderr)()
	}
	term, err := proxyTerminator(o)
	if err != nil {
		return err
	}
	l, err := proxyListener(o, stderr)
	if err != nil {
		return err
	}
	defer l.Close()
	in, out, closeConn, err := deciderConn(o)
	if err != nil {
		return err
	}
	type opened struct {
		link  *decider.Link
		hello decider.Hello
		err   error
	}
	hi := make(chan opened, 1)
	helloRead := make(chan struct{})
	go func() {
		defer close(helloRead)
		link, hello, err := decider.Open(in, out)
		hi <- opened{link, hello, err}
	}()
	defer func() {
		closeConn() // ends a wait for the hello
		<-helloRead
	}()
	var link *decider.Link
	var hello decider.Hello
	select {
	case <-lifeline:
		return nil
	case <-sig:
		return nil
	case o := <-hi:
		if o.err != nil {
			return fmt.Errorf("decider: %w", o.err)
		}
		link, hello = o.link, o.hello
	}
	defer link.Close()
	e, err := proxyEgress(o, hello, link, term, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	served := make(chan error, 1)
	go func() { served <- (&proxy.HTTP{Egress: e, Grace: proxyGrace}).Serve(ctx, l) }()
	// This line, like the rss lines, keeps the form docs/srt-proxy.md
	// gives it: a decider reads the address from it.
	fmt.Fprintf(stderr, "srt-proxy: listening on %s\n", l.Addr())
	select {
	case <-lifeline:
	case <-sig:
	case err := <-served:
		return err
	case <-link.Done():
		// The requests that were waiting are being answered 503: the
		// proxy stops accepting, and closes each connection once its
		// answer is written (or after proxyGrace).
		cancel(nil)
		<-served
		return fmt.Errorf("decider: %v; exiting", link.Err())
	}
	// The parent is gone, or asks the proxy to stop: every connection
	// closes at once.
	cancel(proxy.ErrNoGrace)
	<-served
	return nil
}

// watchLifeline closes lifeline when descriptor fd (-1: none) reaches its
// end; stop ends the watch and returns once it has.
func watchLifeline(fd int) (lifeline <-chan struct{}, stop func(), err error) {
	ended := make(chan struct{})
	if fd < 0 {
		return ended, func() {}, nil
	}
	r, err := pollread.New(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("--lifeline-fd %d: %w", fd, err)
	}
	go func() {
		defer close(ended)
		io.Copy(io.Discard, r)
	}()
	return ended, func() {
		r.Stop()
		<-ended
		r.Close()
	}, nil
}

// proxyTerminator is the TLS terminator of the CA given on --ca-fd; nil
// without one.
func proxyTerminator(o *proxyOptions) (*proxy.Terminator, error) {
	if o.caFD < 0 {
		return nil, nil
	}
	f := os.NewFile(uintptr(o.caFD), "ca-fd")
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("--ca-fd %d: %w", o.caFD, err)
	}
	ca, err := proxy.LoadCA(b, b)
	if err != nil {
		return nil, fmt.Errorf("--ca-fd %d: %w (give the CA certificate and its private key, in PEM)", o.caFD, err)
	}
	return &proxy.Terminator{CA: ca}, nil
}

// deciderConn is the link to the decider: the socket of --decider-fd, or
// the descriptors --decider-in and --decider-out; closeConn ends what is
// read from it, and closes what it opened.
func deciderConn(o *proxyOptions) (in io.Reader, out io.Writer, closeConn func(), err error) {
	if o.deciderFD < 0 {
		// Read through pollread, which closeConn stops: an inherited
		// pipe is read blocking, which nothing could end. Its own pipe
		// stays open until the process ends: the link's reader may
		// still be in a read.
		r, err := pollread.New(o.deciderIn)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--decider-in %d: %w", o.deciderIn, err)
		}
		return r, os.NewFile(uintptr(o.deciderOut), "decider-out"), r.Stop, nil
	}
	f := os.NewFile(uintptr(o.deciderFD), "decider-fd")
	c, err := net.FileConn(f)
	f.Close() // c holds its own descriptor
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--decider-fd %d is not a socket: %w", o.deciderFD, err)
	}
	return c, c, func() { c.Close() }, nil
}

// proxyEgress is the proxy's logic: the hosts of the decider's hello,
// and each request put to the decider.
func proxyEgress(o *proxyOptions, hello decider.Hello, link *decider.Link, term *proxy.Terminator, log *slog.Logger) (*proxy.Egress, error) {
	allowed, err1 := policy.ParseHostList(hello.AllowedDomains)
	denied, err2 := policy.ParseHostList(hello.DeniedDomains)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("decider hello: %w", err)
	}
	rules := &netpolicy.Rules{Allowed: allowed, Denied: denied}
	return &proxy.Egress{
		Rules:     func() *netpolicy.Rules { return rules },
		Listed:    func() []netip.Prefix { return proxy.FilterDeniedRanges },
		HostAddrs: proxy.InterfaceAddrs,
		Log:       log,
		TLS:       term,
		Filter:    &proxy.Filter{Decider: link, StripResponse: o.strip, PlaintextHeaderSet: o.plaintextHeaderSet},
	}, nil
}

// proxyGrace is how long srt proxy, once its decider is gone, lets the
// requests in progress be answered before it exits.
const proxyGrace = 2 * time.Second

// reportRSS prints the resident set size every period (Linux), until
// stop is called, which returns once it has stopped.
func reportRSS(every time.Duration, stderr io.Writer) (stop func()) {
	return periodic.Every(every, func() bool {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			return false
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return false
		}
		pages, _ := strconv.ParseInt(f[1], 10, 64)
		fmt.Fprintf(stderr, "srt-proxy rss %d\n", pages*int64(os.Getpagesize()))
		return true
	})
}
