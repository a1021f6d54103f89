// Package policydiff compares two compiled policies by what they allow,
// not by their text: it asks the same questions of both (review/query)
// for every path, host and socket either one names, and for every switch,
// on each target, and reports each answer that changed as wider (NEW
// allows what OLD denied) or stricter.
package policydiff

import (
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/review/query"
)

// A Change is one answer that differs between the two policies.
type Change struct {
	Target query.Target `json:"target"`
	// Kind is read, write, connect, unix-socket, process or env.
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	// Wider is set when NEW allows what OLD denied.
	Wider bool           `json:"wider"`
	Old   query.Decision `json:"old"`
	New   query.Decision `json:"new"`
}

// Diff compares old and new on the targets. Changes come grouped by
// target (in the order given), then kind and subject.
func Diff(old, new *query.Source, targets []query.Target) []Change {
	eo, en := old.Evaluator("", ""), new.Evaluator("", "")
	var out []Change
	add := func(t query.Target, kind, subject string, o, n query.Decision) {
		if o.Allow != n.Allow {
			out = append(out, Change{Target: t, Kind: kind, Subject: subject, Wider: n.Allow, Old: o, New: n})
		}
	}
	paths := probePaths(mandatoryChanged(old.Policy, new.Policy), old.Policy, new.Policy)
	hosts := probeHosts(old.Policy, new.Policy)
	sockets := probeSockets(old.Policy, new.Policy)
	for _, t := range targets {
		for _, p := range paths {
			add(t, "read", p, eo.Read(p, t), en.Read(p, t))
			add(t, "write", p, eo.Write(p, t), en.Write(p, t))
		}
		for _, h := range hosts {
			add(t, "connect", query.HostPort(h.host, h.port), eo.Connect(h.host, h.port, t), en.Connect(h.host, h.port, t))
		}
		for _, s := range sockets {
			add(t, "unix-socket", s, eo.UnixSocket(s, t), en.UnixSocket(s, t))
		}
		knobs := map[string][2]*query.Decision{}
		var names []string
		for i, e := range []*query.Evaluator{eo, en} {
			for _, l := range e.ProcessLines(t) {
				k := knobs[l.Subject]
				if k[0] == nil && k[1] == nil {
					names = append(names, l.Subject)
				}
				d := l.Decision
				k[i] = &d
				knobs[l.Subject] = k
			}
		}
		for _, name := range names {
			k := knobs[name]
			switch {
			case k[0] != nil && k[1] != nil:
				add(t, "process", name, *k[0], *k[1])
			case strings.HasPrefix(name, "environment ") && k[1] == nil:
				// A variable no longer removed or masked: the command sees it.
				out = append(out, Change{Target: t, Kind: "env", Subject: strings.TrimPrefix(name, "environment "), Wider: true, Old: *k[0],
					New: query.Decision{Allow: true, Rule: policy.Default, Why: "passed to the command as it is"}})
			case strings.HasPrefix(name, "environment "):
				out = append(out, Change{Target: t, Kind: "env", Subject: strings.TrimPrefix(name, "environment "),
					Old: query.Decision{Allow: true, Rule: policy.Default, Why: "passed to the command as it is"}, New: *k[1]})
			case k[1] == nil:
				add(t, "process", name, *k[0], query.Decision{Rule: policy.Default, Why: "not set"})
			default:
				add(t, "process", name, query.Decision{Rule: policy.Default, Why: "not set"}, *k[1])
			}
		}
		out = append(out, addressChanges(t, old.Policy, new.Policy)...)
		out = append(out, injectChanges(t, eo, en, old.Policy.Network.Allowed, new.Policy.Network.Allowed, hosts)...)
		out = append(out, bodyInjectChanges(t, eo, en)...)
	}
	out = collapse(out)
	order := map[query.Target]int{}
	for i, t := range targets {
		order[t] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Target != b.Target {
			return order[a.Target] < order[b.Target]
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Subject < b.Subject
	})
	return out
}

// Wider reports whether any change widens access.
func Wider(cs []Change) bool {
	for _, c := range cs {
		if c.Wider {
			return true
		}
	}
	return false
}

// injectChanges compares, for each credential masked in both policies,
// which hosts receive its real value (kind inject, subject "NAME -> host").
// Masking is the same on every target; the change is reported for each.
// A credential whose scope (its injectHosts, or the allowed hosts when it
// has none: oldAllowed and newAllowed) lists the same hosts in both sends
// its value to the same hosts: it is not asked about each host. One whose
// value goes to more than query.SomeMax hosts more (or fewer) gets one
// change for them all, naming the first few: with many credentials that
// follow allowedDomains, a line per credential and host would make the
// output the product of the two lists, and the connect changes list
// those hosts already.
func injectChanges(t query.Target, eo, en *query.Evaluator, oldAllowed, newAllowed policy.HostList, probes []hostPort) []Change {
	old := map[string]query.Credential{}
	for _, c := range eo.Credentials() {
		old[c.Name] = c
	}
	allowedSame := -1 // not compared yet
	sameScope := func(o, n policy.Masking) bool {
		if o.InjectHosts == nil && n.InjectHosts == nil {
			if allowedSame < 0 {
				allowedSame = 0
				if sameHosts(oldAllowed, newAllowed) {
					allowedSame = 1
				}
			}
			return allowedSame == 1
		}
		return sameHosts(o.InjectScope(oldAllowed), n.InjectScope(newAllowed))
	}
	probeSet := map[string]bool{}
	for _, h := range probes {
		probeSet[h.host] = true
	}
	// hostsChanged are the hosts whose answer differs between the scopes
	// of o and n, sorted; those of two credentials that follow
	// allowedDomains are the same, found once.
	var followers []string
	followersDone := false
	hostsChanged := func(o, n query.Credential) []string {
		if o.Masking.InjectHosts == nil && n.Masking.InjectHosts == nil && followersDone {
			return followers
		}
		set := maps.Clone(probeSet)
		for _, m := range []policy.Masking{o.Masking, n.Masking} {
			for _, r := range m.InjectHosts {
				h := r.Host // canonical, as a destination host is
				if strings.HasPrefix(h, "*.") {
					h = "srt-probe" + h[1:]
				}
				set[strings.ToLower(h)] = true
			}
		}
		var out []string
		for _, h := range sorted(set) {
			if eo.Injects(o.Masking, o.Origin, h).Allow != en.Injects(n.Masking, n.Origin, h).Allow {
				out = append(out, h)
			}
		}
		if o.Masking.InjectHosts == nil && n.Masking.InjectHosts == nil {
			followers, followersDone = out, true
		}
		return out
	}
	var out []Change
	for _, n := range en.Credentials() {
		o, ok := old[n.Name]
		if !ok || !askEveryHost && sameScope(o.Masking, n.Masking) {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(n.Name, "environment "), "credential file ")
		var wider, stricter []string
		for _, h := range hostsChanged(o, n) {
			do, dn := eo.Injects(o.Masking, o.Origin, h), en.Injects(n.Masking, n.Origin, h)
			if askEveryHost || len(wider)+len(stricter) < query.SomeMax {
				out = append(out, Change{Target: t, Kind: "inject", Subject: name + " -> " + h, Wider: dn.Allow, Old: do, New: dn})
			}
			if dn.Allow {
				wider = append(wider, h)
			} else {
				stricter = append(stricter, h)
			}
		}
		if askEveryHost || len(wider)+len(stricter) <= query.SomeMax {
			continue
		}
		// Past the first few hosts, one change for the rest.
		out = out[:len(out)-query.SomeMax]
		for _, d := range []struct {
			hosts []string
			wider bool
		}{{wider, true}, {stricter, false}} {
			if len(d.hosts) == 0 {
				continue
			}
			some := query.Some(d.hosts, "the connect changes")
			c := Change{Target: t, Kind: "inject", Subject: fmt.Sprintf("%s -> %d hosts", name, len(d.hosts)), Wider: d.wider,
				Old: query.Decision{Allow: !d.wider, Rule: o.Origin, Why: fmt.Sprintf("%d hosts received the stand-in: %s", len(d.hosts), some)},
				New: query.Decision{Allow: d.wider, Rule: n.Origin, Why: fmt.Sprintf("the real value now goes to %d more hosts: %s", len(d.hosts), some)}}
			if !d.wider {
				c.Old.Why = fmt.Sprintf("the real value went to %d hosts: %s", len(d.hosts), some)
				c.New.Why = fmt.Sprintf("%d hosts now receive the stand-in: %s", len(d.hosts), some)
			}
			out = append(out, c)
		}
	}
	return out
}

// bodyInjectChanges compares, for each credential masked in both
// policies, which hosts receive its real value in request bodies and in
// every header field too (kind inject-body, subject "NAME -> host"): the
// hosts either policy's bodyInjectHosts names, a wildcard asked about
// through a name under it. A host now listed is a wider change: what it
// keeps, the command can read back.
func bodyInjectChanges(t query.Target, eo, en *query.Evaluator) []Change {
	old := map[string]query.Credential{}
	for _, c := range eo.Credentials() {
		old[c.Name] = c
	}
	var out []Change
	for _, n := range en.Credentials() {
		o, ok := old[n.Name]
		if !ok || len(o.Masking.BodyInjectHosts)+len(n.Masking.BodyInjectHosts) == 0 {
			continue
		}
		set := map[string]bool{}
		for _, m := range []policy.Masking{o.Masking, n.Masking} {
			for _, r := range m.BodyInjectHosts {
				h := strings.ToLower(r.Host)
				if strings.HasPrefix(h, "*.") {
					h = "srt-probe" + h[1:]
				}
				set[h] = true
			}
		}
		name := strings.TrimPrefix(strings.TrimPrefix(n.Name, "environment "), "credential file ")
		for _, h := range sorted(set) {
			do, dn := eo.InjectsBody(o.Masking, o.Origin, h), en.InjectsBody(n.Masking, n.Origin, h)
			if do.Allow != dn.Allow {
				out = append(out, Change{Target: t, Kind: "inject-body", Subject: name + " -> " + h, Wider: dn.Allow, Old: do, New: dn})
			}
		}
	}
	return out
}

// askEveryHost turns the same-scope shortcut off (the tests compare).
var askEveryHost = false

// sameHosts reports whether two scopes list the same host patterns
// (compared as a scope matches them: case aside, ports aside).
func sameHosts(a, b policy.HostList) bool {
	in := func(l policy.HostList) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, r := range l {
			m[strings.ToLower(r.Host)] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	if len(ma) != len(mb) {
		return false
	}
	for h := range ma {
		if !mb[h] {
			return false
		}
	}
	return true
}

// addressChanges compares deniedResolvedAddresses: a range no longer
// listed may be dialled again.
func addressChanges(t query.Target, old, new *policy.Policy) []Change {
	in := func(l []policy.AddressRule) map[string]policy.Origin {
		m := map[string]policy.Origin{}
		for _, r := range l {
			m[r.Range] = r.Origin
		}
		return m
	}
	o, n := in(old.Network.DeniedResolvedAddresses), in(new.Network.DeniedResolvedAddresses)
	var out []Change
	for r, origin := range o {
		if _, ok := n[r]; !ok {
			out = append(out, Change{Target: t, Kind: "resolved-address", Subject: r, Wider: true,
				Old: query.Decision{Rule: origin, Why: "names resolving here are refused"}, New: query.Decision{Allow: true, Rule: policy.Default, Why: "no longer listed"}})
		}
	}
	for r, origin := range n {
		if _, ok := o[r]; !ok {
			out = append(out, Change{Target: t, Kind: "resolved-address", Subject: r,
				Old: query.Decision{Allow: true, Rule: policy.Default, Why: "not listed"}, New: query.Decision{Rule: origin, Why: "names resolving here are refused"}})
		}
	}
	return out
}

var globRun = regexp.MustCompile(`\*\*/|\*+|\?|\[[^\]]+\]`)

// sample turns a pattern into one path it matches ("**/" is dropped, a
// "*" run or "?" becomes x, a set its first member), so that a pattern
// rule has a concrete probe.
func sample(p string) string {
	return globRun.ReplaceAllStringFunc(p, func(m string) string {
		switch {
		case m == "**/":
			return ""
		case strings.HasPrefix(m, "["):
			return m[1:2]
		}
		return "x"
	})
}

// collapse drops a change to a probe below a path whose own answer
// changed the same way: "${HOME}/.ssh/srt-probe" says nothing that
// "${HOME}/.ssh" does not.
func collapse(cs []Change) []Change {
	type key struct {
		t         query.Target
		kind, sub string
		wider     bool
	}
	seen := map[key]bool{}
	for _, c := range cs {
		seen[key{c.Target, c.Kind, c.Subject, c.Wider}] = true
	}
	var out []Change
	for _, c := range cs {
		if parent, ok := strings.CutSuffix(c.Subject, "/"+probeName); ok && seen[key{c.Target, c.Kind, parent, c.Wider}] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// probeName is the last name of the paths probed below a rule's path.
const probeName = "srt-probe"

// mandatoryChanged reports whether the mandatory write denies may differ:
// only then are the dangerous names probed one by one.
func mandatoryChanged(a, b *policy.Policy) bool {
	sa, sb := a.Filesystem.MandatoryScan, b.Filesystem.MandatoryScan
	if a.Filesystem.Disabled != b.Filesystem.Disabled || (sa == nil) != (sb == nil) {
		return true
	}
	return sa != nil && (sa.Depth != sb.Depth || sa.GitConfig != sb.GitConfig)
}

// mandatoryDepths are where probePaths puts the dangerous names: in the
// working directory, one level below it, and deeper than any scan.
var mandatoryDepths = []policy.Path{policy.Cwd.Path(), policy.Cwd.Join("a"), policy.Cwd.Join("a/b/c/d/e/f/g/h/i/j")}

// probePaths are the paths either policy names, a path below each, /,
// and, when mandatory is set, the dangerous names at and below the
// working directory.
func probePaths(mandatory bool, ps ...*policy.Policy) []string {
	set := map[string]bool{"/": true}
	for _, f := range policy.MandatoryFiles {
		if !mandatory {
			break
		}
		for _, dir := range mandatoryDepths {
			set[dir.Join(f).String()] = true
		}
	}
	gitNames := []string{}
	for _, n := range append(append(append([]string{}, policy.GitDirs...), policy.GitFiles...), policy.GitConfigFiles...) {
		gitNames = append(gitNames, ".git/"+n)
	}
	for _, d := range append(append([]string{}, policy.MandatoryDirs...), gitNames...) {
		if !mandatory {
			break
		}
		for _, dir := range mandatoryDepths {
			set[dir.Join(d).Join("x").String()] = true
		}
	}
	for _, p := range ps {
		fs := &p.Filesystem
		for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks} {
			for _, r := range l {
				s := r.Path.String()
				if r.Pattern {
					s = sample(s)
				}
				set[s] = true
				set[strings.TrimSuffix(s, "/")+"/"+probeName] = true
			}
		}
	}
	return sorted(set)
}

type hostPort struct {
	host string
	port int
}

// probeHosts are the hosts either policy names, with a sample host for a
// wildcard, on the rule's port and on 443 and 22.
func probeHosts(ps ...*policy.Policy) []hostPort {
	set := map[hostPort]bool{}
	for _, p := range ps {
		for _, l := range []policy.HostList{p.Network.Allowed, p.Network.Denied} {
			for _, r := range l {
				h := r.Host
				switch {
				case h == "*":
					h = "example.com"
				case strings.HasPrefix(h, "*."):
					h = "srt-probe" + h[1:]
				}
				for _, port := range []int{r.Port, 443, 22} {
					if port != 0 {
						set[hostPort{h, port}] = true
					}
				}
			}
		}
	}
	var out []hostPort
	for h := range set {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].host != out[j].host {
			return out[i].host < out[j].host
		}
		return out[i].port < out[j].port
	})
	return out
}

// probeSockets are the sockets either policy lists, and one no list names.
func probeSockets(ps ...*policy.Policy) []string {
	set := map[string]bool{"/srt-probe/other.sock": true}
	for _, p := range ps {
		for _, r := range p.Network.AllowUnixSockets {
			set[r.Path.String()] = true
		}
	}
	return sorted(set)
}

func sorted(set map[string]bool) []string {
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
