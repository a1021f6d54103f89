package netpolicy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/internal/untrusted"
	"srt.dev/schema/builtin"
)

// RefusedPrefix starts every one-line explanation of a refusal: those
// of Explain and ExplainGuard, and those runtime/proxy and runtime/sandbox
// write for a stand-in sent and a write the second layer refused. srt
// prints them after a command, where a program finds them by it.
const RefusedPrefix = "srt sandbox refused "

// Explain says, in one line, that the srt sandbox refused a connection to
// rawHost:port, which rule decided and what to change in which settings
// file. It is written for whoever reads the refusal: a person, or an agent
// that runs commands in the sandbox. The command chose rawHost, and an
// ask callback its answer: both are shown through untrusted.Quote.
func Explain(r *Rules, d Decision, rawHost string, port int) string {
	target := quoteHost(rawHost, port)
	if d.Host != "" {
		target = quoteHost(d.Host, port)
	}
	file := sourceOf(r)
	switch d.Cause {
	case CauseNone:
		return fmt.Sprintf("srt sandbox allowed %s.", target)
	case CauseMalformed:
		return fmt.Sprintf(RefusedPrefix+"%s: the host name is malformed, and no setting allows it.", target)
	case CauseUnavailable:
		return fmt.Sprintf(RefusedPrefix+"%s: no network policy is loaded.", target)
	case CauseDenyList:
		entry := d.Host
		if d.Rule != nil {
			entry = d.Rule.Entry
		}
		return fmt.Sprintf(RefusedPrefix+"%s: it matches %q in network.deniedDomains, which wins over network.allowedDomains. To allow it, remove that entry from network.deniedDomains in %s.", target, entry, file)
	case CauseNotAllowed:
		return fmt.Sprintf(RefusedPrefix+"%s: it is not in network.allowedDomains. To allow it, add %q to network.allowedDomains in %s.", target, allowEntry(d.Host, port), file)
	case CauseAskFailed:
		return fmt.Sprintf(RefusedPrefix+"%s: it is not in network.allowedDomains and the permission prompt failed. To allow it, add %q to network.allowedDomains in %s.", target, allowEntry(d.Host, port), file)
	case CauseUserDenied:
		return fmt.Sprintf(RefusedPrefix+"%s: it is not in network.allowedDomains and the permission prompt refused it (%s). To allow it, add %q to network.allowedDomains in %s.", target, untrusted.Quote(SanitizeReason(d.Reason, 200)), allowEntry(d.Host, port), file)
	}
	return fmt.Sprintf(RefusedPrefix+"%s (%s).", target, SanitizeReason(d.Reason, 200))
}

// ExplainGuard is Explain for a connection the policy allowed (by the
// allowedDomains entry entry, if known) and the resolved-address guard
// refused: every address host resolved to is in a refused class (reason,
// as Guard.Vet words it).
func ExplainGuard(r *Rules, host string, port int, entry, reason string, addrs []netip.Addr) string {
	file := sourceOf(r)
	by := "network.allowedDomains allows it"
	if entry != "" {
		by = fmt.Sprintf("network.allowedDomains allows it (%q)", entry)
	}
	var fix string
	switch {
	case strings.Contains(reason, classDenyListed):
		fix = "To allow it, remove the address from network.deniedDomains in " + file + "."
	case strings.Contains(reason, classListed):
		fix = "To allow it, remove the range from network.deniedResolvedAddresses in " + file + "."
	case strings.Contains(reason, classNonLoopback):
		fix = "A localhost name may reach only loopback addresses."
	case len(addrs) > 0:
		fix = fmt.Sprintf("To allow that address, list it literally in network.allowedDomains in %s (%q).", file, quoteHost(addrs[0].String(), port))
	}
	return strings.TrimSpace(fmt.Sprintf(RefusedPrefix+"%s: %s, but it %s, which the resolved-address guard refuses. %s", quoteHost(host, port), by, reason, fix))
}

// allowEntry is the allowedDomains entry that allows the canonical host:
// an IPv6 literal in brackets (the grammar refuses it bare), and a name or
// address of this host's loopback with its port, since without one the
// entry opens every port there.
func allowEntry(host string, port int) string {
	entry := host
	if strings.Contains(host, ":") {
		entry = "[" + host + "]"
	}
	if policy.IsLoopbackHost(host) {
		entry += ":" + strconv.Itoa(port)
	}
	return entry
}

// SettingsFile names the settings file r comes from as the explanation
// of a refusal names it: what to edit.
func SettingsFile(r *Rules) string { return sourceOf(r) }

func sourceOf(r *Rules) string {
	if r == nil || r.Source == "" {
		return "the settings file"
	}
	if r.Source == builtin.SettingsName {
		return "~/.srt-settings.json (none exists: the built-in defaults apply, which allow no network)"
	}
	return r.Source
}

// quoteHost writes host:port, bracketing an IPv6 literal; a host that is
// not a plain word is shown Go-quoted (untrusted.Quote), unbracketed.
func quoteHost(host string, port int) string {
	shown := untrusted.Quote(host)
	if shown == host && strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return shown + ":" + strconv.Itoa(port)
}
