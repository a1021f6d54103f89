package proxy

import (
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/untrusted"
)

// StageCredential is the Stage of an Event that records a request to an
// inject host that went with a stand-in where no real value goes (see
// credheaders.go): the body or a header field that carries no
// credential without bodyInjectHosts, the URL, or the body of a request
// srt re-signed with SigV4. The request was not refused; the command
// learns why its credential did not work.
const StageCredential = "credential"

// leftEvent records l, met in a request to the host and port of to, as a
// violation whose explanation says which setting would let the real
// value there.
func (e *Egress) leftEvent(to tunnelOf, l leftStandIn) {
	ev := Event{Proxy: to.proxy, Host: to.host, Port: to.port, Stage: StageCredential, CommandID: to.commandID, Reason: l.reason()}
	if e.Command != "" {
		ev.CommandID = e.Command
	}
	var rules *netpolicy.Rules
	if e.Rules != nil {
		rules = e.Rules()
	}
	e.record(ev, l.explain(netpolicy.SettingsFile(rules), to.host, to.port))
}

// where says where in the request the stand-in was.
func (l leftStandIn) where() string {
	switch l.place {
	case inHeader:
		return "the " + untrusted.Quote(l.header) + " header"
	case inURL:
		return "the URL"
	}
	return "the body"
}

// reason is the violation line's reason: which credential, and where.
func (l leftStandIn) reason() string {
	where := l.where()
	if l.place == inBody {
		where = "the request body"
	} else if l.place == inSignedBody {
		where = "the body of a request srt re-signed with SigV4"
	}
	return l.s.Name + ": the stand-in was sent in " + where + ", not the real value"
}

// explain is the refusal line: what happened, why, and what would let
// the real value there, in file.
func (l leftStandIn) explain(file, host string, port int) string {
	target := untrusted.Quote(host) + ":" + strconv.Itoa(port)
	if strings.Contains(host, ":") {
		target = "[" + host + "]:" + strconv.Itoa(port)
	}
	lead := fmt.Sprintf(netpolicy.RefusedPrefix+"to put the real value of %s in %s of a request to %s", l.s.Name, l.where(), target)
	switch l.place {
	case inURL:
		return lead + " (it sent the stand-in): srt never puts a real value into a URL (servers and proxies keep URLs in logs and histories); send it in a header that carries credentials (Authorization, or the header the API names for its key)."
	case inSignedBody:
		return lead + " that srt re-signed with SigV4 (it sent the stand-in): srt sends such a body as the command wrote it, since its hash may be signed."
	case inHeader:
		lead += ", a header that carries no credential (a credential word counts only as a whole part of a name, and a name hosts keep as data, such as Idempotency-Key or X-Amz-Meta-*, never carries one)"
	}
	lead += " (it sent the stand-in)"
	entry := "the bodyInjectHosts of the credential's entry"
	if l.s.Setting != "" {
		entry = l.s.Setting + ".bodyInjectHosts"
	}
	return lead + fmt.Sprintf(": a real value goes only into the request headers that carry credentials (Authorization, Cookie, X-Api-Key, …), since a host may keep anything else and the command could read it back. If %s needs the value there, add %q to %s in %s (whatever that host keeps, the command can then read back).", host, host, entry, file)
}
