package wfp

import (
	"fmt"
	"strings"

	"srt.dev/compiler/policy"
)

// trustBundleDir stands for the directory of the TLS-termination trust
// bundle, which the runtime writes.
const trustBundleDir = "<directory of the TLS trust bundle>"

// rank sorts the filesystem rules into the four lists the helper gets
// (docs/reference.md#windows-session), on their spellings:
//
//   - credential files (deny and mask mode alike) join the read denies;
//   - an allowRead or allowWrite at or under a credential deny is dropped;
//   - an allowWrite at or under a denyWrite becomes a read grant;
//   - an allowRead under a denyRead stays a grant (the deeper ACE wins).
//
// Only spellings with the same root compare (see under); patterns are
// ranked by the helper after expansion. The helper ranks again on the
// resolved paths (junctions, 8.3 names), which only the host knows.
func (e *emitter) rank() {
	fs := e.p.Filesystem
	for _, r := range fs.DenyRead {
		e.denyRead = append(e.denyRead, r)
		if strings.HasPrefix(r.Origin.Key, "credentials.") {
			e.credDeny = append(e.credDeny, r)
		}
	}
	for _, r := range fs.CredentialMasks {
		e.denyRead = append(e.denyRead, r)
		e.credDeny = append(e.credDeny, r)
	}
	e.denyWrite = fs.DenyWrite
	for _, r := range fs.AllowRead {
		if c, ok := covering(r, e.credDeny); ok {
			e.decide(r, c, "dropped: at or under the credential file "+win(c.Path))
			e.droppedRead = append(e.droppedRead, r)
			continue
		}
		e.read = append(e.read, r)
	}
	var demoted []policy.PathRule
	for _, r := range fs.AllowWrite {
		if c, ok := covering(r, e.credDeny); ok {
			e.decide(r, c, "dropped: at or under the credential file "+win(c.Path))
			e.droppedWrite = append(e.droppedWrite, r)
			continue
		}
		if d, ok := covering(r, e.denyWrite); ok {
			e.decide(r, d, "demoted to a read grant: at or under the denyWrite "+winRule(d))
			demoted = append(demoted, r)
			continue
		}
		e.write = append(e.write, r)
	}
	e.read = append(e.read, demoted...)
}

func (e *emitter) decide(r, by policy.PathRule, decision string) {
	e.ranking = append(e.ranking, RankDecision{Entry: winRule(r), Decision: decision, CausedBy: []policy.Origin{r.Origin, by.Origin}})
}

// covering returns the first rule of list that r lies at or under, on
// spellings; patterns on either side never compare.
func covering(r policy.PathRule, list []policy.PathRule) (policy.PathRule, bool) {
	if r.Pattern {
		return policy.PathRule{}, false
	}
	for _, d := range list {
		if !d.Pattern && under(r.Path, d.Path) {
			return d, true
		}
	}
	return policy.PathRule{}, false
}

func isUNC(p policy.Path) bool { return p.Root() == policy.UNC }

// staticPrefix is a rule's path up to its first segment with a wildcard:
// every match of a pattern lies at or under it.
func staticPrefix(r policy.PathRule) policy.Path {
	if !r.Pattern {
		return r.Path
	}
	segs := strings.Split(r.Path.Rel(), "/")
	for i, s := range segs {
		if strings.ContainsAny(s, "*?") {
			return r.Path.Root().Join(strings.Join(segs[:i], "/")) // C:/ for a drive's root
		}
	}
	return r.Path
}

func (e *emitter) sessionStart() Phase {
	w := e.w
	ops := []Operation{
		{Op: "check-install", Check: &Check{Expect: "the account and its credential exist, the install marker is the version this helper requires, and the helper has these capabilities", SetupVersion: setupVersion,
			Values: []string{"profile-deny-expansion", "kept-grant-holders", "profile-session-grant-check", "read-deny-except", "exec-holder", "profile-retry-stale"}},
			Purpose: "srt-win user status", OnFailure: "not_provisioned (no install), reinstall_required (other marker version), srt_win_outdated (capability missing)", CausedBy: []policy.Origin{w.SandboxUser.Origin, w.SrtWinPath.Origin}},
		e.checkLoopback("the machine's loopback mode (fixed at install) is the one this file asks for"),
		{Op: "profile-read-grant-refresh", Purpose: "refresh a recorded profile grant that is outdated only by narrowing; retry a stale one", OnFailure: "profile_grant_outdated", CausedBy: []policy.Origin{policy.Default}},
	}
	if e.p.Network.TLSTerminate {
		ops = append(ops, Operation{Op: "ensure-persistent-ca", Path: `%ProgramData%\sandbox-runtime\ca`, Condition: "unless network.tlsTerminate names caCertPath and caKeyPath",
			Purpose: "generate the TLS-termination CA once (again within 30 days of expiry), readable by real users, denied to the sandbox group", CausedBy: []policy.Origin{e.origin("network.tlsTerminate")}})
	}
	ops = append(ops, e.globs()...)
	lists := &AccessLists{Read: []string{}, Write: []string{}, DenyRead: []string{}, DenyWrite: []string{}}
	for _, l := range []struct {
		rules []policy.PathRule
		out   *[]string
	}{{e.read, &lists.Read}, {e.write, &lists.Write}, {e.denyRead, &lists.DenyRead}, {e.denyWrite, &lists.DenyWrite}} {
		for _, r := range l.rules {
			if !r.Pattern {
				*l.out = append(*l.out, winRule(r))
			}
		}
	}
	if e.p.Network.TLSTerminate {
		lists.Read = append(lists.Read, trustBundleDir)
	}
	var all []policy.Origin
	for _, l := range [][]policy.PathRule{e.read, e.write, e.denyRead, e.denyWrite} {
		for _, r := range l {
			all = append(all, r.Origin)
		}
	}
	ops = append(ops,
		Operation{Op: "refuse-profile-exclusion-conflicts", Purpose: "before any ACL change: no allowRead path or write root may equal, lie inside or lie above a protected exclusion of the profile read grant (compared after resolving links, junctions, 8.3 names and case)",
			Paths:     e.profileConflicts(),
			Condition: "when a profile read grant is recorded (paths: the conflicts this file's spellings already show)", OnFailure: "profile_exclusion_read_grant", CausedBy: originsOf(e.read, e.write)},
		Operation{Op: "acl-grant-persistent", Lists: lists, Ranking: e.ranking,
			Purpose:   "one call of srt-win acl grant --persistent with these lists on stdin (plus the matches of the patterns above); it writes the entries below and registers this session as a holder of them; with a profile read grant recorded it also writes each read deny onto every granted profile path beneath it",
			OnFailure: "exit 2: partial (some paths failed); the session does not start", CausedBy: orDefault(all)})
	ops = append(ops, e.aces()...)
	ops = append(ops, e.verify(), Operation{Op: "proxy-listen",
		Check:   &Check{Expect: "the HTTP and SOCKS5 proxy (one port serving both) listens on 127.0.0.1 at a free port of the range", PortRange: []int{w.ProxyPortRange.Low, w.ProxyPortRange.High}},
		Purpose: "the only way out of the sandbox: the WFP fence permits loopback connects into this range", CausedBy: []policy.Origin{w.ProxyPortRange.Origin, e.origin("network.allowedDomains")}})
	return Phase{Name: "sessionStart", RunsAs: "the user, not elevated", When: "each time srt starts a session (initialize)", Operations: ops}
}

func originsOf(lists ...[]policy.PathRule) []policy.Origin {
	var out []policy.Origin
	for _, l := range lists {
		for _, r := range l {
			out = append(out, r.Origin)
		}
	}
	return orDefault(out)
}

// orDefault keeps causedBy non-empty: an operation no entry asked for is
// there by default.
func orDefault(o []policy.Origin) []policy.Origin {
	if len(o) == 0 {
		return []policy.Origin{policy.Default}
	}
	return o
}

func (e *emitter) checkLoopback(what string) Operation {
	mode := "closed: only the proxy port range is reachable on loopback"
	if e.loopbackOpen() {
		mode = "open: every loopback port but 1 is reachable (installed with --allow-loopback)"
	}
	return Operation{Op: "check-loopback-mode", Check: &Check{Expect: mode}, Purpose: what,
		OnFailure: "wfp_loopback_mismatch: reinstall with srt windows-install --allow-loopback --force (or without --allow-loopback) to change the machine's mode",
		CausedBy:  []policy.Origin{e.origin("network.allowLocalBinding")}}
}

// globs lists the pattern entries, which the session expands once.
func (e *emitter) globs() []Operation {
	var ops []Operation
	for _, l := range []struct {
		name  string
		rules []policy.PathRule
	}{{"read", e.read}, {"write", e.write}, {"denyRead", e.denyRead}, {"denyWrite", e.denyWrite}} {
		for _, r := range l.rules {
			if !r.Pattern {
				continue
			}
			ops = append(ops, Operation{Op: "expand-glob", Path: winRule(r), Kind: l.name,
				Purpose:   fmt.Sprintf("each match found now joins the %s list of acl-grant-persistent and is ranked like the other entries; * and ? are wildcards, [ ] match a character class, names compare ignoring case", l.name),
				Condition: "once, at session start: files created later are not covered; a match that vanished is dropped",
				CausedBy:  []policy.Origin{r.Origin}})
		}
	}
	return ops
}

// target is the path an entry's ACE goes on, and for a pattern the
// condition that says so.
func target(r policy.PathRule) (string, string) {
	if r.Pattern {
		return "<each match of " + win(r.Path) + ">", "on each match found at session start"
	}
	return win(r.Path), ""
}

func (e *emitter) verify() Operation {
	r := e.w.ProxyPortRange
	c := &Check{Target: fmt.Sprintf("127.0.0.1:<a free port outside %d-%d, found in at most 5 tries, with a listener of this process>", r.Low, r.High),
		Expect:    "connects made as the sandbox account, under the token a command gets, are blocked; anonymous and deny-only variants are reported as residuals",
		MustBlock: []string{"a plain connect", "low- and untrusted-integrity copies of the token, to loopback and off the machine"}}
	if e.loopbackOpen() {
		c.MustBlock = []string{"127.0.0.1:1 (plain, low and untrusted integrity)", "off the machine"}
		c.MustConnect = []string{"the listener (loopback is open)"}
	}
	var roots []string
	for _, w := range e.write {
		p, _ := target(w)
		roots = append(roots, p)
	}
	return Operation{Op: "wfp-verify", Check: c, Paths: roots,
		Purpose:   "proves the fence behaviourally (reading the filters needs elevation): srt-win wfp verify --write-restricted-token --write-root <each write root>, 30 s",
		OnFailure: "wfp_fence_inactive (a must-block connect connected or was refused); exit 19: wfp_loopback_mismatch",
		CausedBy:  []policy.Origin{e.w.SandboxUser.Origin, e.origin("network.allowLocalBinding")}}
}

func (e *emitter) sessionReset() Phase {
	return Phase{Name: "sessionReset", RunsAs: "the user, not elevated", When: "when the session ends (reset); leftovers of a crash: srt-win acl recover", Operations: []Operation{
		{Op: "acl-revoke", Purpose: "srt-win acl revoke --holder-pid <host pid>: release this session's grants; kept: the write grants on allowWrite roots and the denies beneath them", CausedBy: []policy.Origin{policy.Default}},
		{Op: "acl-restore", Condition: "only if every path's revoke outcome is released (revoked, stillHeld, downgraded, relocated, noRow, gone, or missing for a path that is really gone)",
			Purpose: "srt-win acl restore: release this session's denies", CausedBy: []policy.Origin{policy.Default}},
	}}
}
