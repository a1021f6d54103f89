package query

import (
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// A Line is one row of a policy summary: what is reachable on a target,
// and the setting that made it so.
type Line struct {
	Target Target `json:"target"`
	// Kind is read, write, connect, unix-socket or process.
	Kind string `json:"kind"`
	// Subject is the path, host or knob the line is about.
	Subject string `json:"subject"`
	Decision
}

// Summary lists, for each target, what the policy exposes: the verdict on
// every path, host and socket a rule names, each computed with Read,
// Write, Connect and UnixSocket (so a row can never say other than a
// query would), and the process switches. Lines are in a fixed order.
func (e *Evaluator) Summary(targets []Target) []Line {
	var out []Line
	for _, t := range targets {
		add := func(kind, subject string, d Decision) {
			out = append(out, Line{Target: t, Kind: kind, Subject: subject, Decision: d})
		}
		fs := &e.p.Filesystem
		pl := e.on(t)
		add("read", "/ (everything not listed)", e.Read(pl.everything(), t))
		for i, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.CredentialMasks} {
			for _, r := range l {
				d := e.Read(e.expand(r.Path), t)
				if i == 1 && r.TrailingSeparator {
					d.Why += "; " + pl.trailingSeparator()
				}
				add("read", subject(r), d)
			}
		}
		add("write", "/ (everything not listed)", e.Write("/", t))
		for _, l := range pl.extraWrites() {
			add("write", l.Subject, l.Decision)
		}
		var mandatory []string
		for _, l := range [][]policy.PathRule{fs.AllowWrite, fs.DenyWrite} {
			for _, r := range l {
				if !pl.listsWrite(r) {
					continue
				}
				if r.Origin == policy.Mandatory {
					name := r.Path.String()
					if r.Path.Root() == policy.Cwd {
						name = r.Path.Rel()
					}
					mandatory = append(mandatory, name)
					continue
				}
				d := e.Write(e.expand(r.Path), t)
				if r.TrailingSeparator && r.Origin.Key != "" && strings.HasPrefix(r.Origin.Key, "filesystem.allowWrite") {
					d.Why += "; " + pl.trailingSeparator()
				}
				add("write", subject(r), d)
			}
		}
		if len(mandatory) > 0 && !fs.Disabled {
			if below, ok := pl.mandatoryBelowWhy(); ok {
				why := "always write-protected in the working directory" + below + ": " + strings.Join(mandatory, " ")
				add("write", string(policy.Cwd)+"/ shell, git, editor and agent configuration", Decision{Rule: policy.Mandatory, Why: why})
			}
		}
		if len(e.gitHostRules()) > 0 {
			subject := "git's configuration outside the repository"
			switch pl.(type) {
			case linux:
				add("write", subject, Decision{Rule: policy.Mandatory, Why: linuxGitHostWhy})
			case macOS:
				add("write", subject, Decision{Rule: policy.Mandatory, Why: macGitHostWhy})
			}
		}
		if t != policy.TargetWindows { // the Windows plan has no runtime
			add("write", "srt's own files", Decision{Rule: policy.Mandatory, Why: stateWhy()})
		}
		n := &e.p.Network
		for _, l := range []policy.HostList{n.Denied, n.Allowed} {
			for _, r := range l {
				host := r.Host
				if strings.HasPrefix(host, "*.") {
					host = "x" + host[1:]
				} else if host == "*" {
					host = "example.com"
				}
				add("connect", r.Entry, e.Connect(host, r.Port, t))
			}
		}
		add("connect", "anything else", Decision{Rule: policy.Default, Why: "denied: the proxies allow only what allowedDomains names" + externalWhy(n)})
		for _, x := range []struct {
			key, what string
			port      int
		}{{"network.httpProxyPort", "HTTP", n.HTTPProxyPort}, {"network.socksProxyPort", "SOCKS", n.SOCKSProxyPort}} {
			if x.port != 0 {
				add("connect", fmt.Sprintf("host loopback port %d", x.port), Decision{Allow: true, Rule: e.switchOrigin(x.key),
					Why: "the user's " + x.what + " proxy, which the command's proxy variables point at without srt's credentials: it does its own filtering; srt's allow and deny lists, per-command lists and the ask callback do not apply to what goes through it"})
			}
		}
		for _, r := range n.AllowUnixSockets {
			add("unix-socket", r.Path.String(), e.UnixSocket(e.expand(r.Path), t))
		}
		add("unix-socket", "any other path", e.UnixSocket("/nonexistent/srt-probe.sock", t))
		out = append(out, e.ProcessLines(t)...)
	}
	return out
}

// ProcessLines are the process lines of the summary of target t (the
// switches, the environment and the credentials), without the rest.
func (e *Evaluator) ProcessLines(t Target) []Line {
	var out []Line
	for _, k := range e.knobs(e.on(t)) {
		out = append(out, Line{Target: t, Kind: "process", Subject: k.name, Decision: k.d})
	}
	return out
}

// subject is a rule's path as a summary line names it: the compiled path,
// and the spelling it was folded from ("${CWD}/conf (written
// ./app/../conf)").
func subject(r policy.PathRule) string {
	if r.Written != "" {
		return r.Path.String() + " (written " + r.Written + ")"
	}
	return r.Path.String()
}

// TrailingSeparator says what an allow entry written with a trailing
// separator and glob characters ("/data/in/*/") means on t.
func TrailingSeparator(t Target) string { return new(Evaluator).on(t).trailingSeparator() }

type knob struct {
	name string
	d    Decision
}

// sw is the knob of a settings switch: allowed by the switch when on.
func (e *Evaluator) sw(name, key string, on bool, whyOn, whyOff string) knob {
	if on {
		return knob{name, Decision{Allow: true, Rule: e.switchOrigin(key), Why: whyOn}}
	}
	return knob{name, Decision{Rule: policy.Default, Why: whyOff}}
}

// localBindingName names the knob of network.allowLocalBinding.
const localBindingName = "local binding (listen on localhost)"

// knobs are the process switches that matter on pl: its own, then the
// environment and credential lines, the same on every target.
func (e *Evaluator) knobs(pl platform) []knob {
	out := pl.knobs()
	out = append(out, e.limitKnobs(pl)...)
	if len(e.p.Env.Mask)+len(e.p.Filesystem.CredentialMasks) > 0 {
		// srt (Linux) swaps masked values in on terminated TLS, or on
		// plain HTTP when allowed.
		why := "srt on Linux sends a masked credential's real value only to its inject hosts, over terminated TLS"
		if e.p.Env.AllowPlaintextInject {
			why += " or plain HTTP (allowPlaintextInject)"
		}
		why += ", and there only in the request header fields that carry credentials unless bodyInjectHosts lists the host; every other request carries the stand-in, and a real value an upstream sends back reaches the command as its stand-in"
		if e.bodyInjected() {
			why += "; a credential has bodyInjectHosts, so the responses of every host are read whole (no Range, no compression kept, no WebSocket)"
		} else {
			why += "; the responses of the inject hosts are read whole (no Range, no compression kept, no WebSocket)"
		}
		out = append(out, knob{"credential injection", Decision{Rule: e.switchOrigin("network.tlsTerminate"), Why: why}})
	}
	for _, v := range e.p.Env.Unset {
		out = append(out, knob{"environment " + v.Name, Decision{Rule: v.Origin, Why: "removed from the command's environment"}})
	}
	for _, v := range e.p.Env.Mask {
		out = append(out, knob{"environment " + v.Name, Decision{Rule: v.Origin,
			Why: "the real value comes from srt's environment when it starts; the command sees " + MaskedPart(v.Masking, false) + "; " + e.InjectScope(v.Masking)}})
	}
	for _, a := range e.p.Env.AWSPairs {
		vars := a.AccessKeyIDVar + "/" + a.SecretAccessKeyVar
		if a.SessionTokenVar != "" {
			vars += "/" + a.SessionTokenVar
		}
		sv := policy.SigV4{}
		if e.p.Env.SigV4 != nil {
			sv = *e.p.Env.SigV4
		}
		or := func(v policy.SigV4Mode) string { return string(v.Resolved()) }
		out = append(out, knob{"AWS key " + vars, Decision{Rule: a.Origin,
			Why: "on Linux, SigV4 requests signed with the stand-in key id are signed again with the real secret, for the hosts every variable of the pair is injected into; requests that cannot be signed again: streaming " + or(sv.Streaming) + ", presigned " + or(sv.Presigned) + ", sigv4a " + or(sv.SigV4A) + " (credentials.sigv4, which a policy update can change)"}})
	}
	for _, f := range e.p.Filesystem.CredentialMasks {
		if f.Mask == nil {
			continue
		}
		out = append(out, knob{"credential file " + f.Path.String(), Decision{Rule: f.Origin,
			Why: "on Linux the real values come from the file, read by srt when it starts; the command reads a copy showing " + MaskedPart(*f.Mask, true) + "; " + e.InjectScope(*f.Mask) + " (macOS and Windows hide the file)"}})
	}
	return out
}

// MaskedPart says what a masked credential shows the command.
func MaskedPart(m policy.Masking, file bool) string {
	var what string
	switch {
	case m.Decode == policy.DecodeJWT && len(m.MaskClaims) > 0:
		what = "each JSON Web Token as a fake one whose claims " + strings.Join(m.MaskClaims, ", ") + " are stand-ins"
	case m.Decode == policy.DecodeJWT:
		what = "each JSON Web Token as a fake one whose claims are stand-ins (exp, nbf and iat stay readable)"
	case m.Extract != "":
		what = "a stand-in for the first group of each match of " + strconv.Quote(m.Extract) + ", the rest as it is"
	case file:
		return "a stand-in of the content's length"
	default:
		return "a stand-in of the value's length"
	}
	if m.Decode == policy.DecodeJWT && m.Extract != "" {
		what += " (tokens found by " + strconv.Quote(m.Extract) + ")"
	}
	if m.MaskDuplicates {
		what += ", and the secrets' repeats elsewhere in the file as stand-ins too"
	}
	switch m.OnExtractNoMatch.Resolved() {
	case policy.NoMatchError:
		what += "; if none is found, srt does not run the command"
	case policy.NoMatchDeny:
		what += "; if none is found, the credential is hidden"
	case policy.NoMatchWarn:
		what += "; if none is found, the real value is shown unmasked, with a warning (onExtractNoMatch \"warn\")"
	}
	return what
}

// InjectScope says which hosts receive a masked credential's real value,
// and where in their requests.
func (e *Evaluator) InjectScope(m policy.Masking) string {
	var to string
	switch hosts := e.allowedHosts(); {
	case m.InjectHosts != nil:
		to = "the proxy sends the real value to " + strings.Join(m.InjectHosts.Entries(), ", ") + " (injectHosts)"
	case len(hosts) == 0:
		return "no host receives the real value (injectHosts is not set and allowedDomains is empty)"
	default:
		to = "the proxy sends the real value to every allowedDomains host: " + Some(hosts, "network.allowedDomains") + " (injectHosts is not set)"
	}
	if len(m.BodyInjectHosts) == 0 {
		return to + ", only in the request header fields that carry credentials (Authorization, Cookie, X-Api-Key, …), never in a body or a URL"
	}
	return to + ", in the header fields that carry credentials, and to " + strings.Join(m.BodyInjectHosts.Entries(), ", ") +
		" also in request bodies and every other header field (bodyInjectHosts): whatever those hosts keep, the command can read back"
}

// bodyInjected reports whether a masked credential has bodyInjectHosts.
func (e *Evaluator) bodyInjected() bool {
	for _, c := range e.Credentials() {
		if len(c.Masking.BodyInjectHosts) > 0 {
			return true
		}
	}
	return false
}

// allowedHosts are the allowed hosts, each once, in order: what every
// masked credential without injectHosts is sent to, read once per
// evaluator rather than once per credential.
func (e *Evaluator) allowedHosts() []string {
	list := func() []string {
		var hosts []string
		seen := map[string]bool{}
		for _, r := range e.p.Network.Allowed {
			if !seen[r.Host] {
				seen[r.Host] = true
				hosts = append(hosts, r.Host)
			}
		}
		return hosts
	}
	x := e.idx
	if x == nil {
		return list()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.allowedHostsMade {
		x.allowedHosts, x.allowedHostsMade = list(), true
	}
	return x.allowedHosts
}

// SomeMax is how many items Some names.
const SomeMax = 10

// Some names the items of a list that every masked credential without
// injectHosts would repeat (the allowed hosts): all of them up to SomeMax,
// else the first SomeMax and how many more the list, named by where, holds.
// Said once per credential, the whole list would make the output the
// product of the two lists.
func Some(items []string, where string) string {
	if len(items) <= SomeMax {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more (all of %s)", strings.Join(items[:SomeMax], ", "), len(items)-SomeMax, where)
}

// hostLoopbackWhy says whether the command reaches the host's loopback:
// never directly, and through the proxies only for what allowedDomains
// lists of it.
func (e *Evaluator) hostLoopbackWhy() string {
	via := e.HostLoopback()
	var ext []string
	for _, p := range []int{e.p.Network.HTTPProxyPort, e.p.Network.SOCKSProxyPort} {
		if p != 0 {
			ext = append(ext, strconv.Itoa(p))
		}
	}
	external := ""
	if len(ext) > 0 {
		external = "; the sandbox's proxy listeners relay to the external proxy port " + strings.Join(ext, " and ") + " on the host's loopback, and to nothing else there"
		if len(ext) > 1 {
			external = strings.Replace(external, "proxy port", "proxy ports", 1)
		}
	}
	if len(via) == 0 {
		return "the host's loopback is not reachable (no allowedDomains entry names localhost, a loopback address or *)" + external
	}
	return "the host's loopback is not reachable directly, but through the proxies it is, for " + strings.Join(via, ", ") + external
}

// FormatOrigin renders an Origin as "key file:line:col" or "key".
func FormatOrigin(o policy.Origin) string {
	if o.Pos == "" {
		return o.Key
	}
	return o.Key + " " + o.Pos
}

// HostPort renders host and port the way a settings entry writes them.
func HostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// stateWhy explains the rules of srt's own files (policy.SrtState).
func stateWhy() string {
	var ro, hidden []string
	for _, s := range policy.SrtState {
		if s.Hidden {
			hidden = append(hidden, string(s.Kind)+" ("+s.Why+")")
		} else {
			ro = append(ro, string(s.Kind)+" ("+s.Why+")")
		}
	}
	return "always read-only, however the settings read, a path absent at the start never created: " + strings.Join(ro, "; ") +
		"; always hidden: " + strings.Join(hidden, "; ") + " (" + policy.StateWhy + ")"
}

// limitKnobs are the lines of the resource limits (limits.*): how pl
// enforces each (a deny: the sandbox cannot take more), or that it does
// not (an allow).
func (e *Evaluator) limitKnobs(pl platform) []knob {
	var out []knob
	for _, l := range e.p.Process.Limits {
		d := Decision{Rule: l.Origin}
		switch pl.(type) {
		case linux:
			d.Why = linuxLimitWhy[l.Kind]
		case macOS:
			d.Allow, d.Why = true, "not enforced: Seatbelt has no resource limits, and srt sets none on macOS"
		default:
			d.Allow, d.Why = true, "not enforced: the Windows plan sets no memory, process or CPU-time limit"
		}
		out = append(out, knob{fmt.Sprintf("limit %s = %d", l.Origin.Key, l.Value), d})
	}
	return out
}

// linuxLimitWhy says how srt enforces each limit on Linux
// (runtime/sandbox/limits_linux.go).
var linuxLimitWhy = map[policy.LimitKind]string{
	policy.LimitMemory:    "the whole sandbox's memory, in a cgroup where srt may make one below its own (the kernel kills inside the sandbox when it is full; srt says so); elsewhere RLIMIT_DATA, per process (an allocation fails; srt cannot tell)",
	policy.LimitProcesses: "the sandbox's processes and threads, in a pids cgroup where srt may make one (srt reports refused forks); RLIMIT_NPROC too, counted in the sandbox's own user namespace, which does not bind root",
	policy.LimitCPU:       "RLIMIT_CPU per process (SIGXCPU, then SIGKILL a second later); with a cgroup, srt also stops the sandbox once all of it has used that much",
	policy.LimitOpenFiles: "RLIMIT_NOFILE, per process",
}
