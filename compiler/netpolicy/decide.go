package netpolicy

import (
	"context"
	"errors"
	"sync"

	"srt.dev/compiler/policy"
)

// Reasons a connection is refused, as the reference words them.
const (
	ReasonMalformed   = "malformed host"
	ReasonDenyList    = "host is on the deny list"
	ReasonNotAllowed  = "host is not on the allow list"
	ReasonUserDenied  = "user denied"
	ReasonAskFailed   = "permission prompt failed"
	ReasonUnavailable = "sandbox policy unavailable"
)

// Rules is the network policy the proxies enforce; it is replaced whole when
// the settings change. The zero value allows nothing.
type Rules struct {
	Allowed policy.HostList
	Denied  policy.HostList
	// DeniedReasons maps a deny entry, as written, to its reason.
	DeniedReasons map[string]string
	// Strict stops at the allow list: no per-command list, no ask.
	Strict bool
	// PerCommand returns the allow list registered for a command id, if
	// any. nil means none.
	PerCommand func(id string) (policy.HostList, bool)
	// Ask decides what no rule decides. nil means deny. An error denies
	// with ReasonAskFailed; allow=false with a reason denies with it,
	// sanitised.
	Ask func(ctx context.Context, rawHost string, port int) (allow bool, reason string, err error)
	// Source is the settings file the rules come from, named in the
	// explanation of a refusal (Explain); "" means unknown.
	Source string

	// The indexes of Allowed and Denied, made on first use: a generated
	// allow list has up to 180,000 entries, and every connection asks.
	once            sync.Once
	allowed, denied *policy.HostIndex
}

func (r *Rules) index() {
	r.once.Do(func() { r.allowed, r.denied = r.Allowed.Index(), r.Denied.Index() })
}

// A Decision is the verdict on one connection.
type Decision struct {
	Allow bool
	// Host is the canonical host every later step uses (dial, Host
	// header, the guard); empty for a malformed host.
	Host string
	// Reason says why a connection is refused.
	Reason string
	// Rule is the entry that decided, if one did.
	Rule *policy.HostRule
}

// Decide applies the decision order of docs/reference.md#network-decision to a host as
// the client spelled it: malformed → deny; canonicalise; deny list; allow
// list; strict → deny; the command's own list; ask; deny.
func Decide(ctx context.Context, r *Rules, rawHost string, port int, commandID string) Decision {
	if r == nil {
		return Decision{Reason: ReasonUnavailable}
	}
	host, err := policy.CanonicalHost(rawHost)
	if err != nil {
		return Decision{Reason: ReasonMalformed}
	}
	r.index()
	if rule, ok := r.denied.Match(host, port); ok {
		reason := ReasonDenyList
		if text, ok := r.DeniedReasons[rule.Entry]; ok && text != "" {
			reason = text
		}
		return Decision{Host: host, Reason: reason, Rule: &rule}
	}
	if rule, ok := r.allowed.Match(host, port); ok {
		return Decision{Allow: true, Host: host, Rule: &rule}
	}
	if r.Strict {
		return Decision{Host: host, Reason: ReasonNotAllowed}
	}
	if commandID != "" && r.PerCommand != nil {
		if list, ok := r.PerCommand(commandID); ok {
			if rule, ok := list.Match(host, port); ok {
				return Decision{Allow: true, Host: host, Rule: &rule}
			}
		}
	}
	if r.Ask == nil {
		return Decision{Host: host, Reason: ReasonNotAllowed}
	}
	allow, reason, err := r.Ask(ctx, rawHost, port)
	switch {
	case err != nil || errors.Is(ctx.Err(), context.Canceled):
		return Decision{Host: host, Reason: ReasonAskFailed}
	case allow:
		return Decision{Allow: true, Host: host}
	}
	if reason = SanitizeReason(reason, 500); reason == "" {
		reason = ReasonUserDenied
	}
	return Decision{Host: host, Reason: reason}
}
