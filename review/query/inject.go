package query

import (
	"strings"

	"srt.dev/compiler/policy"
)

// A Credential is a masked credential of the policy: a variable or a
// credential file.
type Credential struct {
	// Name is "environment NAME" or "credential file PATH", as the
	// summary lists it.
	Name    string
	Masking policy.Masking
	Origin  policy.Origin
}

// Credentials lists the policy's masked credentials.
func (e *Evaluator) Credentials() []Credential {
	var out []Credential
	for _, v := range e.p.Env.Mask {
		out = append(out, Credential{"environment " + v.Name, v.Masking, v.Origin})
	}
	for _, f := range e.p.Filesystem.CredentialMasks {
		if f.Mask != nil {
			out = append(out, Credential{"credential file " + f.Path.String(), *f.Mask, f.Origin})
		}
	}
	return out
}

// Injects answers whether the proxy sends the real value of a credential
// masked by m to host (canonical, without port): the hosts of
// injectHosts, or, when it is not set, of allowedDomains, ports ignored.
func (e *Evaluator) Injects(m policy.Masking, o policy.Origin, host string) Decision {
	from := "allowedDomains (injectHosts is not set)"
	if m.InjectHosts != nil {
		from = "injectHosts"
	}
	scope := e.injectScope(m)
	if r, ok := scope.Match(strings.ToLower(host), 0); ok {
		return Decision{Allow: true, Rule: o, Why: "the real value is sent to " + host + ": " + from + " lists " + r.Entry}
	}
	return Decision{Rule: o, Why: host + " receives the stand-in: " + from + " does not list it"}
}

// InjectsBody answers whether the proxy sends the real value of a
// credential masked by m to host (canonical, without port) also in
// request bodies and in the header fields that carry no credential: host
// is an inject host (Injects) that bodyInjectHosts lists.
func (e *Evaluator) InjectsBody(m policy.Masking, o policy.Origin, host string) Decision {
	if d := e.Injects(m, o, host); !d.Allow {
		return d
	}
	if r, ok := m.BodyInjectScope().Match(strings.ToLower(host), 0); ok {
		return Decision{Allow: true, Rule: r.Origin, Why: "the real value goes into request bodies and every header field sent to " + host + ": bodyInjectHosts lists " + r.Entry}
	}
	return Decision{Rule: o, Why: host + " receives the real value only in the header fields that carry credentials: bodyInjectHosts does not list it"}
}

// injectScope is m.InjectScope(allowed), indexed, made once per list of
// inject hosts (diff asks about every host of both policies).
func (e *Evaluator) injectScope(m policy.Masking) *policy.HostIndex {
	var key *policy.HostRule // the allowed hosts, or the first of m's inject hosts
	if len(m.InjectHosts) > 0 {
		key = &m.InjectHosts[0]
	}
	make := func() *policy.HostIndex { return m.InjectScope(e.p.Network.Allowed).Index() }
	x := e.idx
	if x == nil || m.InjectHosts != nil && key == nil {
		return make() // an empty injectHosts list
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	id := scopeID{key, len(m.InjectHosts)}
	if s, ok := x.scopes[id]; ok {
		return s.index
	}
	index := make()
	if x.scopes == nil {
		x.scopes = map[scopeID]scope{}
	}
	x.scopes[id] = scope{index}
	return index
}

// A scopeID names a list of inject hosts: its first element and length
// (nil for the allowed hosts), as the policy holds it.
type scopeID struct {
	first *policy.HostRule
	n     int
}

type scope struct {
	index *policy.HostIndex
}
