package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/violations"
)

// MinCommandIDLength is the shortest per-command id accepted: 22
// characters are 128 bits as unpadded base64url (docs/reference.md#command-lists).
const MinCommandIDLength = 22

// Ask decides a connection that no rule decides (docs/reference.md#ask-callback):
// only allow=true allows; a refusal may carry a reason, which is sanitised
// (invisible characters to spaces, "<" and ">" removed, 500 UTF-16 units)
// before anyone sees it. An error, or a panic, refuses with "permission
// prompt failed". host is as the client spelled it. ctx ends when the
// client goes or its run ends; the connection is refused then, without
// waiting for the callback to return.
type Ask func(ctx context.Context, host string, port int) (allow bool, reason string, err error)

// ManagerOptions configure a Manager. Every field is optional.
type ManagerOptions struct {
	// Ask is called for destinations no rule decides; nil refuses them.
	// It is never called under strictAllowlist.
	Ask Ask
	// Audit receives the audit log, one JSON object per line
	// (violations.AuditLog): the start and exit of every run
	// (violations.RunRecord; see Run) and, between them, every network
	// decision, allowed or refused, and each write the sandbox refused
	// that a run reports (Linux) (violations.Record). Once a write to it
	// has failed (AuditErr), no run starts.
	Audit io.Writer
	// OnViolation is called for each refusal recorded (after
	// ignoreViolations); it must not block.
	OnViolation func(violations.Entry)
	// Log receives debug lines.
	Log *slog.Logger
	// Getenv is the environment the parent proxy falls back to
	// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY and their lower-case forms),
	// read once, by NewManager; nil means this process's.
	Getenv func(string) string
}

// A Manager is the runtime as a library: one network policy, one set of
// proxy rules, violation store and audit log, shared by every command it
// wraps (Run may be called concurrently). The network policy can be
// replaced while commands run (Update); per-command allow lists extend it
// for one command id.
//
// On Linux each sandbox has its own network namespace and so its own pair
// of proxy listeners; they are served by this one Manager, and a
// connection is attributed to the command whose sandbox it came from, not
// to the user name the client sends (which a command could forge).
type Manager struct {
	o      ManagerOptions
	rules  atomic.Pointer[netpolicy.Rules]
	listed atomic.Pointer[[]netip.Prefix]
	store  violations.Store
	audit  *violations.AuditLog
	// parent is the parent proxy, fixed at start; mitm the mitmProxy
	// route in force (upstream.go).
	parent *proxy.Parent
	mitm   atomic.Pointer[proxy.Mitm]
	// tls holds tlsTerminate's live options (nil without tlsTerminate).
	tls atomic.Pointer[credentials.TLSOptions]
	// sigv4 is credentials.sigv4 in force: what the proxy does with the
	// SigV4 requests it cannot re-sign.
	sigv4 atomic.Pointer[proxy.SigV4Policy]

	mu     sync.Mutex
	policy *policy.Policy
	lists  map[string]policy.HostList // attribution key -> per-command list
}

// NewManager returns a Manager enforcing p.
func NewManager(p *policy.Policy, o ManagerOptions) (*Manager, error) {
	m := &Manager{o: o, lists: map[string]policy.HostList{}}
	if o.Audit != nil {
		m.audit = violations.NewAuditLog(o.Audit)
	}
	if err := m.Update(p); err != nil {
		return nil, err
	}
	m.parent = parentProxy(p, o.Getenv, o.Log)
	return m, nil
}

// Run runs argv (a program and its arguments) in a sandbox of p, with a
// Manager of its own.
func Run(ctx context.Context, p *policy.Policy, argv []string, o Options) (*Result, error) {
	m, err := NewManager(p, ManagerOptions{Log: o.Log})
	if err != nil {
		return nil, err
	}
	return m.Run(ctx, argv, o)
}

// attribution is a command's id (CommandID, else its text), its text
// (CommandText, else argv joined by spaces) and its attribution key.
func (o *Options) attribution(argv []string) (id, text, key string) {
	text = o.CommandText
	if text == "" {
		text = strings.Join(argv, " ")
	}
	id = text
	if o.CommandID != "" {
		id = o.CommandID
	}
	return id, text, violations.Key(id)
}

// Policy returns the policy in force.
func (m *Manager) Policy() *policy.Policy {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.policy
}

// Update replaces the policy (docs/reference.md#live-updates). What the proxies
// decide takes effect on the next connection: allowedDomains,
// deniedDomains, deniedDomainReasons, strictAllowlist,
// deniedResolvedAddresses, mitmProxy, ignoreViolations,
// tlsTerminate's excludeDomains and limits, and credentials.sigv4 (next
// request). Everything else
// (the file-system rules above all, and the parent proxy) is fixed inside sandboxes already running
// and applies to commands started after the update (FixedPartsDiffer
// tells a caller whether there is any such change to report).
func (m *Manager) Update(p *policy.Policy) (err error) {
	if p == nil {
		return errors.New("no policy")
	}
	if err := mitmConflict(p); err != nil {
		return err
	}
	var listed []netip.Prefix
	for _, a := range p.Network.DeniedResolvedAddresses {
		if !a.Prefix.IsValid() {
			return fmt.Errorf("network.deniedResolvedAddresses: %q was not parsed by the compiler", a.Range)
		}
		listed = append(listed, a.Prefix)
	}
	var live *credentials.TLSOptions
	if t := p.Network.TLS; t != nil {
		live = credentials.NewTLSOptions(t)
	}
	r := &netpolicy.Rules{
		Allowed:       p.Network.Allowed,
		Denied:        p.Network.Denied,
		DeniedReasons: p.Network.DeniedReasons,
		Strict:        p.Network.StrictAllowlist,
		PerCommand:    m.perCommand,
		Source:        p.Source,
	}
	if m.o.Ask != nil {
		r.Ask = m.ask
	}
	m.mu.Lock()
	m.policy = p
	m.mu.Unlock()
	m.listed.Store(&listed)
	m.tls.Store(live)
	m.sigv4.Store(credentials.SigV4Policy(p.Env.SigV4))
	m.mitm.Store(mitmRoute(p))
	m.rules.Store(r)
	m.store.SetIgnore(p.IgnoreViolations)
	return nil
}

// FixedPartsDiffer reports whether b changes anything an Update cannot
// apply to a running sandbox: everything but the network decisions and
// ignoreViolations.
func FixedPartsDiffer(a, b *policy.Policy) bool {
	strip := func(p *policy.Policy) policy.Policy {
		c := *p
		c.Source, c.SourceSHA256, c.IgnoreViolations = "", "", nil
		n := c.Network
		n.Allowed, n.Denied, n.DeniedReasons, n.StrictAllowlist, n.DeniedResolvedAddresses = nil, nil, nil, false, nil
		if n.TLS != nil {
			// Whether TLS is terminated and with which CA is fixed; the
			// excluded hosts and the limits apply to the next CONNECT.
			t := *n.TLS
			t.ExcludeDomains, t.MaxTunnels, t.HandshakeTimeoutMs = nil, 0, 0
			n.TLS = &t
		}
		n.MitmProxy = nil
		c.Network = n
		// credentials.sigv4 applies to the next request; the masked
		// variables and their pairs are fixed.
		c.Env.SigV4 = nil
		return c
	}
	return !reflect.DeepEqual(stripOrigins(strip(a)), stripOrigins(strip(b)))
}

// stripOrigins clears rule origins and the switches' positions (positions
// move when a line is edited without changing meaning).
func stripOrigins(p policy.Policy) policy.Policy {
	p.Switches = nil
	fs := p.Filesystem
	clear := func(rules []policy.PathRule) []policy.PathRule {
		out := make([]policy.PathRule, len(rules))
		for i, r := range rules {
			r.Origin = policy.Origin{}
			out[i] = r
		}
		return out
	}
	fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks = clear(fs.DenyRead), clear(fs.AllowRead), clear(fs.AllowWrite), clear(fs.DenyWrite), clear(fs.CredentialMasks)
	if fs.MandatoryScan != nil {
		ms := *fs.MandatoryScan
		ms.Origin = policy.Origin{}
		fs.MandatoryScan = &ms
	}
	p.Filesystem = fs
	p.Network.AllowUnixSockets = clear(p.Network.AllowUnixSockets)
	if p.Network.TLS != nil {
		t := *p.Network.TLS
		t.Origin = policy.Origin{}
		p.Network.TLS = &t
	}
	env := p.Env
	for _, l := range []*[]policy.EnvRule{&env.Unset, &env.Mask} {
		out := make([]policy.EnvRule, len(*l))
		for i, r := range *l {
			out[i] = policy.EnvRule{Name: r.Name, Masking: r.Masking}
		}
		*l = out
	}
	pairs := make([]policy.AWSPair, len(env.AWSPairs))
	for i, a := range env.AWSPairs {
		a.Origin = policy.Origin{}
		pairs[i] = a
	}
	env.AWSPairs = pairs
	p.Env = env
	return p
}

// RegisterCommandNetworkLists lets the command with this id also reach
// the hosts of allowed (build it with compiler.AllowList, which checks
// the allowedDomains grammar). The list is consulted after the deny and
// allow lists and before Ask, never under strictAllowlist, and never
// overrides a deny. The id is a secret the caller chooses: at least
// MinCommandIDLength characters among its first 100
// (docs/reference.md#command-lists); registering an id again replaces its list. The error never
// repeats the id.
func (m *Manager) RegisterCommandNetworkLists(id string, allowed policy.HostList) error {
	n := 0
	for _, r := range violations.First100(id) {
		if r != '\uFFFD' {
			n++
		}
	}
	if n < MinCommandIDLength {
		return fmt.Errorf("per-command id too short: %d characters, need at least %d unguessable ones (e.g. 16 random bytes as base64url)", n, MinCommandIDLength)
	}
	m.mu.Lock()
	m.lists[violations.Key(id)] = allowed
	m.mu.Unlock()
	return nil
}

// UnregisterCommandNetworkLists removes id's list; an unknown id is a
// no-op.
func (m *Manager) UnregisterCommandNetworkLists(id string) {
	m.mu.Lock()
	delete(m.lists, violations.Key(id))
	m.mu.Unlock()
}

func (m *Manager) perCommand(key string) (policy.HostList, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.lists[key]
	return l, ok
}

// ask calls the callback; a panic in it refuses the connection instead of
// taking the proxies down. A callback that does not heed ctx is left to
// finish on its own: the connection, and the run's end, do not wait for
// it.
func (m *Manager) ask(ctx context.Context, host string, port int) (allow bool, reason string, err error) {
	type answer struct {
		allow  bool
		reason string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			if p := recover(); p != nil {
				a = answer{false, "", fmt.Errorf("ask callback panicked: %v", p)}
			}
			answered <- a
		}()
		a.allow, a.reason, a.err = m.o.Ask(ctx, host, port)
	}()
	select {
	case a := <-answered:
		return a.allow, a.reason, a.err
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}

// Violations is the store of refusals.
func (m *Manager) Violations() *violations.Store { return &m.store }

// AuditErr reports the first failed write to the audit log.
func (m *Manager) AuditErr() error {
	if m.audit == nil {
		return nil
	}
	return m.audit.Err()
}

// egress returns the proxy logic for one command: clients must present
// token, a secret of that run alone (on macOS every run's proxies listen
// on the host's loopback, where another run could reach them); its
// connections are attributed to key, whatever user name they send; kept
// refusals also go to onViolation, and the entry of each rule that allows
// a connection to onAllow.
func (m *Manager) egress(key, command, token string, onViolation func(violations.Entry), onAllow func(rule string)) *proxy.Egress {
	m.store.Register(key, command)
	return &proxy.Egress{
		Token:     token,
		Command:   key,
		Rules:     func() *netpolicy.Rules { return m.rules.Load() },
		Listed:    func() []netip.Prefix { return *m.listed.Load() },
		HostAddrs: proxy.InterfaceAddrs,
		Log:       m.o.Log,
		Parent:    m.parent,
		Mitm:      m.mitm.Load,
		OnDecision: func(ev proxy.Event) {
			if m.audit != nil {
				m.audit.Write(violations.Record{Time: ev.Time, Proxy: ev.Proxy, Host: ev.Host, Port: ev.Port, Allow: ev.Allow,
					Reason: ev.Reason, Rule: ev.Rule, Stage: ev.Stage, Program: violations.ProgramOf(command), CommandHash: violations.CommandHash(ev.CommandID)})
			}
			if ev.Allow {
				if onAllow != nil && ev.Rule != "" {
					onAllow(ev.Rule)
				}
				return
			}
			e, kept := m.store.Add(ev.Line(), ev.CommandID, ev.Time)
			if !kept {
				return
			}
			e.Why = ev.Why
			if m.o.OnViolation != nil {
				m.o.OnViolation(e)
			}
			if onViolation != nil {
				onViolation(e)
			}
		},
	}
}
