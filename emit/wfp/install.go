package wfp

import (
	"fmt"
	"strings"

	"srt.dev/compiler/policy"
)

// WFP filter weights (docs/reference.md#windows-install): within the sublayer the
// highest-weighted matching filter decides, so both permits outrank the
// block.
const (
	weightPermitRange = "0x0F80000000000000"
	weightPermitOpen  = "0x0F60000000000000"
	weightBlockUser   = "0x0F40000000000000"
	sublayerWeight    = "0x8000"
	// setupVersion is the install marker the 0.0.83 helper records and
	// requires (README of 0.0.83).
	setupVersion = 3
)

func (e *emitter) install() Phase {
	user, guid := e.w.SandboxUser, e.w.SublayerGUID
	def := []policy.Origin{policy.Default}
	ops := []Operation{
		{Op: "ensure-group", Name: groupName, Purpose: "the group the sandbox account belongs to; trustee of the logon-right denials, the write grants and the profile read grant, so that a renamed account inherits them", CausedBy: def},
		{Op: "ensure-user", Purpose: "the local account every sandboxed command runs as; refused if a principal of that name exists that no earlier install created; a re-install rotates the password",
			Account: &Account{Name: user.Value, Privilege: "USER", Flags: []string{"SCRIPT", "DONT_EXPIRE_PASSWD"},
				Password: "32 random characters from A-Z a-z 0-9 and !#$%()*+,-./:;=?@[]_{}~ (at least one of each class); stored only DPAPI-protected (machine scope) in the registry record below, never in this plan"},
			OnFailure: "exit 14 (account provisioning failed)", CausedBy: []policy.Origin{user.Origin}},
		{Op: "add-group-member", Group: sidUsers, Member: sidUser, Purpose: "BUILTIN\\Users (resolved by SID, whatever the locale) carries the interactive logon right CreateProcessWithLogonW needs", CausedBy: []policy.Origin{user.Origin}},
		{Op: "add-group-member", Group: sidGroup, Member: sidUser, Purpose: "membership that the group's grants and denials apply through", CausedBy: []policy.Origin{user.Origin}},
		{Op: "hide-account-from-logon-screen", Registry: &RegistryKey{Key: `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Winlogon\SpecialAccounts\UserList`,
			Values: []RegistryValue{{Name: user.Value, Type: "REG_DWORD", Value: "0"}}}, Purpose: "cosmetic: the account does not appear on the sign-in screen", CausedBy: []policy.Origin{user.Origin}},
		{Op: "lsa-add-rights", Member: sidGroup, Rights: []string{"SeDenyNetworkLogonRight", "SeDenyBatchLogonRight", "SeDenyServiceLogonRight", "SeDenyRemoteInteractiveLogonRight"},
			Purpose: "the sandbox identities cannot log on over the network, as a batch job or service, or by remote desktop; interactive logon stays allowed for the launcher; re-asserted on every install because a domain policy may overwrite it", CausedBy: def},
		{Op: "secure-directory", Path: `%ProgramData%\sandbox-runtime`, Purpose: "holds only the persistent TLS-termination CA key material; owner BUILTIN\\Administrators (taken by handle, reparse points refused); protected DACL",
			ACEs: []ACE{
				ace(`%ProgramData%\sandbox-runtime`, sidGroup, "DENY", MaskFullControl, "until uninstall (the directory is left behind)"),
				ace(`%ProgramData%\sandbox-runtime`, "S-1-5-18 (SYSTEM)", "ALLOW", MaskFullControl, "until uninstall (the directory is left behind)"),
				ace(`%ProgramData%\sandbox-runtime`, "S-1-5-32-544 (BUILTIN\\Administrators)", "ALLOW", MaskFullControl, "until uninstall (the directory is left behind)"),
				ace(`%ProgramData%\sandbox-runtime`, sidUsers, "ALLOW", MaskUsersState, "until uninstall (the directory is left behind)"),
			}, CausedBy: def},
		{Op: "write-registry-record", Purpose: "the install record: the account's DPAPI-protected password (denied to the sandbox group, so the sandbox cannot read its own password), the users' CA record, and the marker written last as the commit point",
			Registry: &RegistryKey{Key: `HKLM\SOFTWARE\sandbox-runtime`, Values: []RegistryValue{
				{Name: `Cred\Blob`, Type: "REG_BINARY", Value: "<DPAPI (machine scope) of the password>; key DACL O:BA D:P(D;;KA;;;sid:group)(A;;KA;;;SY)(A;;KA;;;BA)(A;;KR;;;BU)"},
				{Name: `Ca`, Type: "key", Value: "key DACL O:BA D:P(D;;KA;;;sid:group)(A;;KA;;;SY)(A;;KA;;;BA)(A;;0x2001b;;;BU)"},
				{Name: "SandboxUser", Type: "REG_SZ", Value: user.Value},
				{Name: "SandboxUserSid", Type: "REG_SZ", Value: sidUser},
				{Name: "SandboxGroupSid", Type: "REG_SZ", Value: sidGroup},
				{Name: "CreatedAt", Type: "REG_QWORD", Value: "<install time>"},
				{Name: "AmbientDenies", Type: "REG_MULTI_SZ", Value: "the paths of ambient-write-deny below"},
				{Name: "MarkerVersion", Type: "REG_DWORD", Value: fmt.Sprint(setupVersion)},
			}}, CausedBy: []policy.Origin{user.Origin}},
		{Op: "ambient-write-deny", Paths: []string{`C:\Users\Public`, "<the other stock world-writable system directories>"},
			ACE:     &ACE{Path: "<each path above>", Trustee: sidUser, Type: "DENY", Mask: MaskDenyWrite, Rights: MaskDenyWrite.rightsText(), Inheritance: inheritSubtree, Lifetime: "until uninstall; folded into every later change of these DACLs so that no session strips it"},
			Purpose: "directories every user may write would otherwise be writable by the sandbox (the token's Everyone restricting SID admits them)", OnFailure: "exit 17 (ambient write-deny stamping failed)",
			Unverified: "the exact list of directories is not in the published sources (third-party notes count 11)", CausedBy: def},
		{Op: "wfp-begin-transaction", Purpose: "every WFP change below commits together or not at all", OnFailure: "abort the transaction; exit 12 (WFP install failed)", CausedBy: def},
		{Op: "wfp-add-sublayer", Sublayer: &Sublayer{GUID: guid.Value, Name: "srt-win", Weight: sublayerWeight, Flags: []string{"FWPM_SUBLAYER_FLAG_PERSISTENT"}},
			Purpose: "the sublayer the filters live in (no WFP provider object is registered: filters identify themselves by their providerData tag); an existing sublayer is fine; an install under this sublayer with another port range, loopback mode or account is refused without --force (exit 13)", CausedBy: []policy.Origin{guid.Origin}},
		{Op: "wfp-delete-tagged-filters", Sublayer: &Sublayer{GUID: guid.Value, Name: "srt-win", Weight: sublayerWeight, Flags: []string{"FWPM_SUBLAYER_FLAG_PERSISTENT"}},
			Purpose: `delete every filter in the sublayer whose providerData parses as JSON with "tool":"srt-win", so that installing again converges (and migrates older filter shapes)`, CausedBy: []policy.Origin{guid.Origin}},
	}
	for _, v := range []string{"v4", "v6"} {
		ops = append(ops, e.permitRange(v))
		if e.loopbackOpen() {
			ops = append(ops, e.permitOpen(v))
		}
		ops = append(ops, e.blockUser(v))
	}
	ops = append(ops, Operation{Op: "wfp-commit-transaction", Purpose: fmt.Sprintf("%d filters in all (%d per IP version)", filtersPerLayer(e.loopbackOpen())*2, filtersPerLayer(e.loopbackOpen())), CausedBy: def})
	return Phase{Name: "install", RunsAs: "an administrator, elevated (srt windows-install asks once through UAC; 120 s budget)", When: "once per machine, before the first session; again to change the account, ports or loopback mode (with --force)", Operations: ops}
}

func filtersPerLayer(open bool) int {
	if open {
		return 3
	}
	return 2
}

const inheritSubtree = "subtree (OI)(CI)"

func ace(path, trustee, typ string, m Mask, lifetime string) ACE {
	return ACE{Path: path, Trustee: trustee, Type: typ, Mask: m, Rights: m.rightsText(), Inheritance: inheritSubtree, Lifetime: lifetime}
}

func layer(v string) string {
	if v == "v4" {
		return "FWPM_LAYER_ALE_AUTH_CONNECT_V4"
	}
	return "FWPM_LAYER_ALE_AUTH_CONNECT_V6"
}

func loopbackCondition(v string) Condition {
	if v == "v4" {
		return Condition{Field: "FWPM_CONDITION_IP_REMOTE_ADDRESS", Match: "FWP_MATCH_EQUAL", Value: "127.0.0.0/8 (address 0x7F000000, mask 0xFF000000)", Meaning: "the connection goes to IPv4 loopback"}
	}
	return Condition{Field: "FWPM_CONDITION_IP_REMOTE_ADDRESS", Match: "FWP_MATCH_EQUAL", Value: "::1", Meaning: "the connection goes to IPv6 loopback"}
}

func (e *emitter) permitRange(v string) Operation {
	r := e.w.ProxyPortRange
	return Operation{Op: "wfp-add-filter", Purpose: "lets connections reach the proxies: loopback, ports of the proxy range; no user condition (other accounts are not fenced anyway)",
		Filter: &Filter{DisplayName: "srt-win-" + v + "-permit-loopback-user", Layer: layer(v), Action: "FWP_ACTION_PERMIT", Weight: weightPermitRange, Flags: []string{"FWPM_FILTER_FLAG_PERSISTENT"},
			Conditions: []Condition{loopbackCondition(v),
				{Field: "FWPM_CONDITION_IP_REMOTE_PORT", Match: "FWP_MATCH_RANGE", Value: fmt.Sprintf("[%d, %d] (FWP_UINT16)", r.Low, r.High), Meaning: "the destination port lies in windows.proxyPortRange"}},
			ProviderData: fmt.Sprintf(`{"tool":"srt-win","kind":"permit-loopback-user","port_range":[%d,%d],"user_sid":"%s"}`, r.Low, r.High, sidUser)},
		CausedBy: []policy.Origin{r.Origin, e.w.SublayerGUID.Origin}}
}

func (e *emitter) permitOpen(v string) Operation {
	return Operation{Op: "wfp-add-filter", Purpose: "network.allowLocalBinding: the sandbox may connect to any loopback port but port 1, which stays blocked so that the session's fence probe has a connect that must fail",
		Filter: &Filter{DisplayName: "srt-win-" + v + "-permit-loopback-open", Layer: layer(v), Action: "FWP_ACTION_PERMIT", Weight: weightPermitOpen, Flags: []string{"FWPM_FILTER_FLAG_PERSISTENT"},
			Conditions: []Condition{loopbackCondition(v),
				{Field: "FWPM_CONDITION_IP_REMOTE_PORT", Match: "FWP_MATCH_RANGE", Value: "[2, 65535] (FWP_UINT16)", Meaning: "every TCP and UDP port but 1"}},
			ProviderData: fmt.Sprintf(`{"tool":"srt-win","kind":"permit-loopback-open","user_sid":"%s"}`, sidUser)},
		Unverified: "the reference documents this filter but its exact WFP encoding and weight are not in the published sources (docs/reference.md#windows-install)",
		CausedBy:   []policy.Origin{e.origin("network.allowLocalBinding")}}
}

func (e *emitter) blockUser(v string) Operation {
	return Operation{Op: "wfp-add-filter", Purpose: "blocks every other connection made by a socket the sandbox account created (checked once, at connect, on the token the socket was created under); a blocked connect fails with WSAEACCES (10013)",
		Filter: &Filter{DisplayName: "srt-win-" + v + "-block-user", Layer: layer(v), Action: "FWP_ACTION_BLOCK", Weight: weightBlockUser, Flags: []string{"FWPM_FILTER_FLAG_PERSISTENT"},
			Conditions: []Condition{{Field: "FWPM_CONDITION_ALE_USER_ID", Match: "FWP_MATCH_EQUAL", Value: "O:LSG:LSD:(A;;CC;;;" + sidUser + ")",
				Meaning: "the socket's user is the sandbox account (the descriptor grants it 'match'; owner and group LocalService so that AccessCheck accepts it)"}},
			ProviderData: fmt.Sprintf(`{"tool":"srt-win","kind":"block-user","user_sid":"%s"}`, sidUser)},
		Unverified: "0.0.83 says the block also catches AppContainer processes of the account, which implies more SIDs in the descriptor than the published source shows",
		CausedBy:   []policy.Origin{e.w.SandboxUser.Origin, e.w.SublayerGUID.Origin}}
}

// Protected exclusions of the profile read grant that lie directly under
// the profile (docs/reference.md#windows-profile-grant; srt-win's full list is longer).
var protectedExclusions = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".terraform.d", ".wrangler", ".vercel", ".netlify", ".claude",
	".config/gcloud", ".config/gh", ".config/configstore",
	".git-credentials", ".netrc", "_netrc", ".pypirc", ".vault-token", ".terraformrc",
	".cargo/credentials", ".cargo/credentials.toml", ".config/git/credentials",
	".gradle/enterprise/keys.properties", ".gradle/develocity/keys.properties",
	"AppData/Local/Packages", "AppData/Local/sandbox-runtime",
}

// Paths the profile grant opens whole (docs/reference.md#windows-profile-grant).
var profileGranted = []string{
	`%LOCALAPPDATA%\Programs`, `%LOCALAPPDATA%\Microsoft\WinGet`, `%APPDATA%\npm`, `%APPDATA%\nvm`, `%APPDATA%\fnm`,
	`%LOCALAPPDATA%\fnm_multishells`, `%LOCALAPPDATA%\Volta`, `%LOCALAPPDATA%\pnpm`, `%USERPROFILE%\go`, `%USERPROFILE%\.dotnet`,
	`%LOCALAPPDATA%\Microsoft\dotnet`, `%USERPROFILE%\.bun`, `%USERPROFILE%\.deno`, `%USERPROFILE%\.jdks`, `%USERPROFILE%\pipx`,
	`%USERPROFILE%\miniconda3`, `%USERPROFILE%\anaconda3`, `%USERPROFILE%\.nuget`, `%USERPROFILE%\.rustup`, `%USERPROFILE%\.cargo`,
	`%USERPROFILE%\.m2`, `%APPDATA%\pip`, `%USERPROFILE%\pip`, `%APPDATA%\NuGet`, `%USERPROFILE%\.gradle`, `%USERPROFILE%\.config\git`,
	`%USERPROFILE%\.config\pip`, `%APPDATA%\Python`, `%USERPROFILE%\.pyenv`, `%USERPROFILE%\.npmrc`, `%USERPROFILE%\.gitconfig`,
}

func (e *emitter) installUser() Phase {
	var excl []string
	for _, x := range protectedExclusions {
		excl = append(excl, win(policy.Home.Join(x)))
	}
	grant := &ProfileGrant{
		Trustee:             sidGroup,
		Mask:                MaskRead,
		GrantedWhole:        profileGranted,
		ProtectedExclusions: excl,
		ExclusionsTreatment: "an explicit DENY for " + sidGroup + ", written before any grant (common ones are created empty to carry it)",
		Containers:          "where an exclusion may lie beneath (.cargo, .config\\git, .gradle, the children of %LOCALAPPDATA% and %LOCALAPPDATA%\\Microsoft, the app directories under Programs and WinGet\\Packages) the directory is list-and-traverse only and its children are granted one by one; links, junctions and cloud placeholders are never written through",
		ExclusionsNotListed: "srt-win also excludes registry hives (NTUSER.DAT*, UsrClass.dat*), browser, mail and password-manager profiles, EBWebView directories, the Windows credential stores under %APPDATA%\\Microsoft and %LOCALAPPDATA%\\Microsoft, stores moved by CARGO_HOME GRADLE_USER_HOME GNUPGHOME DOCKER_CONFIG AZURE_CONFIG_DIR GH_CONFIG_DIR AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE NETRC KUBECONFIG, and --profile-exclude extras; %LOCALAPPDATA%\\Temp is neither granted nor denied",
		Skipped:             "srt windows-install --skip-profile-grant; an installer that is a service account (S-1-5-18/19/20) or does not own the interactive session",
		ConflictRuleAtStart: "a session refuses (profile_exclusion_read_grant), before any ACL change, an allowRead path or write root that equals, lies inside or lies above a protected exclusion; for %LOCALAPPDATA%\\Temp only equal or above",
	}
	grant.KnownConflictsInFile = e.profileConflicts()
	return Phase{Name: "installUser", RunsAs: "the installing user, not elevated", When: "right after install; refreshed by sessions when it only narrowed",
		Operations: []Operation{{Op: "profile-read-grant", Profile: grant,
			Purpose:  "per-user tool installs in the profile (node, python, rust, go, …) stay usable by the sandbox account; secrets in the profile stay denied; the grant is to the machine-wide group, so any local user's sandbox can read a granted profile",
			CausedBy: []policy.Origin{policy.Default}}}}
}

func (e *emitter) uninstall() Phase {
	def := []policy.Origin{policy.Default}
	guid, user := e.w.SublayerGUID, e.w.SandboxUser
	return Phase{Name: "uninstall", RunsAs: "an administrator, elevated, then the user", When: "srt windows-uninstall; refused while a session of the user runs (kept_grants_in_use)", Operations: []Operation{
		{Op: "wfp-delete-tagged-filters", Sublayer: &Sublayer{GUID: guid.Value, Name: "srt-win", Weight: sublayerWeight, Flags: []string{"FWPM_SUBLAYER_FLAG_PERSISTENT"}}, Purpose: "elevated: remove the srt-win filters", CausedBy: []policy.Origin{guid.Origin}},
		{Op: "wfp-delete-sublayer", Sublayer: &Sublayer{GUID: guid.Value, Name: "srt-win", Weight: sublayerWeight, Flags: []string{"FWPM_SUBLAYER_FLAG_PERSISTENT"}}, Purpose: "elevated: remove the sublayer (tolerating 'in use')", CausedBy: []policy.Origin{guid.Origin}},
		{Op: "lsa-remove-rights", Member: sidGroup, Rights: []string{"SeDenyNetworkLogonRight", "SeDenyBatchLogonRight", "SeDenyServiceLogonRight", "SeDenyRemoteInteractiveLogonRight"}, Purpose: "elevated", CausedBy: def},
		{Op: "delete-profile", Name: user.Value, Purpose: "elevated: the sandbox account's own profile directory", CausedBy: []policy.Origin{user.Origin}},
		{Op: "delete-user", Name: user.Value, Purpose: "elevated", CausedBy: []policy.Origin{user.Origin}},
		{Op: "delete-group", Name: groupName, Purpose: "elevated", CausedBy: def},
		{Op: "unhide-account", Name: user.Value, Purpose: "elevated: remove the Winlogon UserList value", CausedBy: []policy.Origin{user.Origin}},
		{Op: "clear-ambient-write-denies", Purpose: "elevated: remove the install-time write denies recorded in AmbientDenies", CausedBy: def},
		{Op: "delete-registry-key", Registry: &RegistryKey{Key: `HKLM\SOFTWARE\sandbox-runtime`}, Purpose: "elevated", CausedBy: def},
		{Op: "acl-forget-all", Purpose: "as the user: remove the kept write grants and the denies kept beneath them (srt-win acl forget --all)", CausedBy: def},
		{Op: "profile-forget", Purpose: "as the user: remove the profile read grant (srt-win profile forget); %ProgramData%\\sandbox-runtime and %LOCALAPPDATA%\\sandbox-runtime are left behind", CausedBy: def},
	}}
}

// profileConflicts lists the allowRead paths and write roots that equal,
// lie inside or lie above a protected exclusion of the profile grant, as
// far as spellings tell (paths under %USERPROFILE%), one line per entry.
func (e *emitter) profileConflicts() []string {
	var out []string
	for _, r := range append(append([]policy.PathRule{}, e.read...), e.write...) {
		if r.Pattern {
			continue
		}
		var inside, above []string
		for _, x := range protectedExclusions {
			ex := policy.Home.Join(x)
			switch {
			case under(r.Path, ex):
				inside = append(inside, win(ex))
			case under(ex, r.Path):
				above = append(above, win(ex))
			}
		}
		entry := fmt.Sprintf("%s (%s)", win(r.Path), Causes{r.Origin}.String())
		if len(inside) > 0 {
			out = append(out, entry+" is or lies inside the protected exclusion "+strings.Join(inside, ", "))
		}
		if len(above) > 0 {
			out = append(out, entry+" lies above the protected exclusions "+strings.Join(above, ", "))
		}
	}
	return out
}
