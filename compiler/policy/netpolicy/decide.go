package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"srt.dev/compiler/policy"
)

// A Cause is why a connection is refused: one of a fixed set, whatever
// text the refusal shows (Decision.Reason).
type Cause uint8

// The causes, in the decision order (docs/reference.md#network-decision).
const (
	// CauseNone: the connection is allowed.
	CauseNone Cause = iota
	// CauseUnavailable: no network policy is loaded.
	CauseUnavailable
	// CauseMalformed: the host fails validation before any rule.
	CauseMalformed
	// CauseDenyList: a deniedDomains entry matches (Decision.Rule).
	CauseDenyList
	// CauseNotAllowed: no rule allows it, and nothing was asked.
	CauseNotAllowed
	// CauseAskFailed: the permission prompt failed or was abandoned.
	CauseAskFailed
	// CauseUserDenied: the permission prompt refused it.
	CauseUserDenied
)

// Causes returns every cause.
func Causes() []Cause {
	return []Cause{CauseNone, CauseUnavailable, CauseMalformed, CauseDenyList, CauseNotAllowed, CauseAskFailed, CauseUserDenied}
}

// Text is the reason the reference gives for a refusal with cause c and
// no text of its own: a deniedDomainReasons entry replaces it for
// CauseDenyList, the prompt's answer for CauseUserDenied. "" for
// CauseNone.
func (c Cause) Text() string {
	switch c {
	case CauseNone:
		return ""
	case CauseUnavailable:
		return "sandbox policy unavailable"
	case CauseMalformed:
		return "malformed host"
	case CauseDenyList:
		return "host is on the deny list"
	case CauseNotAllowed:
		return "host is not on the allow list"
	case CauseAskFailed:
		return "permission prompt failed"
	case CauseUserDenied:
		return "user denied"
	}
	return fmt.Sprintf("cause %d", uint8(c))
}

// String names c, for logs and test failures.
func (c Cause) String() string {
	switch c {
	case CauseNone:
		return "none"
	case CauseUnavailable:
		return "unavailable"
	case CauseMalformed:
		return "malformed"
	case CauseDenyList:
		return "deny-list"
	case CauseNotAllowed:
		return "not-allowed"
	case CauseAskFailed:
		return "ask-failed"
	case CauseUserDenied:
		return "user-denied"
	}
	return fmt.Sprintf("Cause(%d)", uint8(c))
}

// refuse is the decision to refuse a connection to host for cause c, with
// the cause's own text.
func refuse(host string, c Cause) Decision {
	return Decision{Host: host, Cause: c, Reason: c.Text()}
}

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
	// with CauseAskFailed; allow=false denies with CauseUserDenied and the
	// reason, sanitised, as the text.
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
	// Cause says why a connection is refused; CauseNone when it is
	// allowed. Decisions are told apart by Cause, never by Reason.
	Cause Cause
	// Reason is the text a refusal shows (violation lines, the status
	// phrase): Cause.Text(), or the entry's deniedDomainReasons text
	// (CauseDenyList), or the prompt's answer (CauseUserDenied). It may be
	// any text the settings or the prompt chose.
	Reason string
	// Rule is the entry that decided, if one did.
	Rule *policy.HostRule
}

// Decide applies the decision order of docs/reference.md#network-decision to a host as
// the client spelled it: malformed → deny; canonicalise; deny list; allow
// list; strict → deny; the command's own list; ask; deny.
func Decide(ctx context.Context, r *Rules, rawHost string, port int, commandID string) Decision {
	if r == nil {
		return refuse("", CauseUnavailable)
	}
	host, err := policy.CanonicalHost(rawHost)
	if err != nil {
		return refuse("", CauseMalformed)
	}
	r.index()
	if rule, ok := r.denied.Match(host, port); ok {
		d := refuse(host, CauseDenyList)
		if text, ok := r.DeniedReasons[rule.Entry]; ok && text != "" {
			d.Reason = text
		}
		d.Rule = &rule
		return d
	}
	if rule, ok := r.allowed.Match(host, port); ok {
		return Decision{Allow: true, Host: host, Rule: &rule}
	}
	if r.Strict {
		return refuse(host, CauseNotAllowed)
	}
	if commandID != "" && r.PerCommand != nil {
		if list, ok := r.PerCommand(commandID); ok {
			if rule, ok := list.Match(host, port); ok {
				return Decision{Allow: true, Host: host, Rule: &rule}
			}
		}
	}
	if r.Ask == nil {
		return refuse(host, CauseNotAllowed)
	}
	allow, reason, err := r.Ask(ctx, rawHost, port)
	switch {
	case err != nil || errors.Is(ctx.Err(), context.Canceled):
		return refuse(host, CauseAskFailed)
	case allow:
		return Decision{Allow: true, Host: host}
	}
	d := refuse(host, CauseUserDenied)
	if reason = SanitizeReason(reason, 500); reason != "" {
		d.Reason = reason
	}
	return d
}
