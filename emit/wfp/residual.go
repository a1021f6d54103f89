package wfp

import "srt.dev/compiler/policy"

// residualRisks are the known limitations (docs/reference.md#windows-residual-risks and
// docs/reference.md#windows-install), plus what this project's plan cannot establish by itself.
func (e *emitter) residualRisks() []ResidualRisk {
	user := []policy.Origin{e.w.SandboxUser.Origin}
	r := []ResidualRisk{
		{ID: "not-executed", Risk: "srt does not execute this plan: no Windows runtime exists in this project yet, and nothing in it has been run on a Windows machine", Mitigation: "use the plan for review; run sandboxed commands on Linux for now"},
		{ID: "alpha", Risk: "the reference's Windows sandbox is alpha"},
		{ID: "shared-machine", Risk: "the account, the group, the WFP filters and the kept write grants are machine-wide: another user running an older helper, or exec without --write-restricted-token, can write kept roots; any local user's sandbox can read a kept root or a granted profile", Mitigation: "use on single-user machines", CausedBy: user},
		{ID: "schannel-clients", Risk: "clients that use Schannel, WinHTTP or .NET TLS fail under the write-restricted token", Mitigation: "git is switched to OpenSSL; use OpenSSL-based clients"},
		{ID: "per-user-tools", Risk: "per-user tool installs in the profile are readable only through the profile read grant; with --skip-profile-grant they fail"},
		{ID: "per-command-grants", Risk: "a command cannot get grants of its own: allowRead and allowWrite are per session"},
		{ID: "proxy-token-on-command-line", Risk: "the proxy token reaches the helper as --env arguments, visible to processes of the same session that can read command lines", Mitigation: "the helper also reads a length-prefixed environment frame on stdin (--env-stdin) in its newer sources"},
		{ID: "service-carried-traffic", Risk: "traffic that system services carry is not fenced: SMB to loopback (remote SMB is stopped by the network-logon denial), WSL, and DNS through the Dnscache service (names resolve although connects fail)", CausedBy: user},
		{ID: "anonymous-and-derived-tokens", Risk: "sockets created while impersonating the anonymous token, or under a restricted or deny-only copy of the sandbox token, are not fenced (reported by wfp-verify as anonymous-egress, anonymous-loopback, deny-only-user-sid)"},
		{ID: "glob-snapshot", Risk: "patterns are expanded once at session start, and absent deny targets get placeholders then: files created later are not covered by a pattern"},
		{ID: "loopback-mode-machine-wide", Risk: "whether loopback is open is fixed per machine at install; two settings files that differ in network.allowLocalBinding cannot both run", CausedBy: []policy.Origin{e.origin("network.allowLocalBinding")}},
		{ID: "no-mandatory-write-denies", Risk: "unlike Linux and macOS, Windows has no mandatory write denies: in a write root the command can write .git/hooks, .git/config, .git/commondir, .bashrc, .vscode and the other names Linux and macOS protect, and git's configuration outside the repository (%USERPROFILE%\\.gitconfig, %USERPROFILE%\\.config\\git\\config, what %XDG_CONFIG_HOME% and %GIT_CONFIG_GLOBAL% name), which every later git command on the machine reads", Mitigation: "list them in filesystem.denyWrite"},
		{ID: "ranking-on-spellings", Risk: "srtc ranks entries on their spellings (ignoring case); the helper ranks again on resolved paths (junctions, symbolic links, 8.3 names), which can change the outcome"},
		{ID: "unverified-details", Risk: "not established by the published sources: the open-loopback filter's encoding, the block filter's descriptor for AppContainer processes, how sid:cap(root) is derived, the list of ambient write-deny directories"},
	}
	if lim := e.p.Process.Limits; len(lim) > 0 {
		var causes []policy.Origin
		for _, l := range lim {
			causes = append(causes, l.Origin)
		}
		r = append(r, ResidualRisk{ID: "limits-not-enforced", Risk: "the resource limits (limits) are not enforced on Windows: this plan sets no memory, process or CPU-time limit, and a command can take all the machine's memory, processes and CPU time", Mitigation: "run such commands on Linux, where srt enforces them", CausedBy: causes})
	}
	return r
}
