package wfp

import (
	"fmt"
	"slices"
	"strings"

	"srt.dev/compiler/policy"
)

// MaxCommandLine is the longest helper command line the library starts
// (CreateProcess allows 32,767 UTF-16 units; the reference keeps a margin).
const MaxCommandLine = 30000

// caVars are the variables that point clients at the TLS trust bundle
// (docs/reference.md#macos-env), in the reference's order.
var caVars = []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
	"AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE"}

const (
	defaultShell = `%SystemRoot%\System32\cmd.exe`
	commandWord  = "<the command, as one argument>"
)

func (e *emitter) perCommand() (Phase, error) {
	env := e.environment()
	argv := []string{e.srtWin(), "--srt-win", "exec", "--quiet", "--held-by", "<host pid>", "--write-restricted-token"}
	for _, w := range e.write {
		p, _ := target(w)
		argv = append(argv, "--write-root", p)
	}
	if e.loopbackOpen() {
		argv = append(argv, "--allow-loopback")
	}
	for _, l := range env.Layers {
		for _, v := range l.Vars {
			argv = append(argv, "--env", v.Name+"="+v.Value)
		}
	}
	for i, kv := range env.GitConfig.Entries {
		argv = append(argv, "--env", fmt.Sprintf("GIT_CONFIG_KEY_<n+%d>=%s", i, kv.Key), "--env", fmt.Sprintf("GIT_CONFIG_VALUE_<n+%d>=%s", i, kv.Value))
	}
	if len(env.GitConfig.Entries) > 0 {
		argv = append(argv, "--env", fmt.Sprintf("GIT_CONFIG_COUNT=<n+%d>", len(env.GitConfig.Entries)))
	}
	argv = append(argv, "--", defaultShell, "/d", "/s", "/c", commandWord)
	estimate := commandLineLength(argv[:len(argv)-1])
	if estimate > MaxCommandLine {
		return Phase{}, fmt.Errorf("argv_too_long: the helper's command line would be about %d characters before the command itself, over the %d the library starts (CreateProcess allows 32,767); fewer or shorter allowWrite roots and git.safeDirectories", estimate, MaxCommandLine)
	}
	var roots []string
	for _, w := range e.write {
		p, _ := target(w)
		roots = append(roots, capSID(p))
	}
	ex := &Exec{
		Argv: argv,
		Shells: []ShellChoice{
			{BinShell: "(unset)", Argv: []string{defaultShell, "/d", "/s", "/c", commandWord + " (inside one outer pair of quotes, for /s)"}},
			{BinShell: "pwsh", Argv: []string{"pwsh.exe", "-NoProfile", "-Command", commandWord}},
			{BinShell: "powershell", Argv: []string{`%SystemRoot%\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-Command", commandWord}},
			{BinShell: "an absolute path to bash or sh", Argv: []string{"<that path>", "-c", commandWord}},
			{BinShell: "bash or sh without a path", Argv: []string{"refused: bin_shell_invalid"}},
		},
		Environment: env,
		Token: Token{User: sidUser, RestrictingSID: append([]string{sidUser, "S-1-1-0 (Everyone)", "S-1-5-12 (RESTRICTED)"}, roots...),
			DenyOnlySIDs: []string{"S-1-5-32-544 (BUILTIN\\Administrators)"}, Privileges: "all removed but SeChangeNotifyPrivilege", Integrity: "medium",
			Effect: "write-restricted: a write must be granted both to the account and to a restricting SID, so writes succeed only in this session's write roots, the account's own profile and places writable by Everyone; reads are unaffected; Schannel, WinHTTP and .NET TLS do not work under this token"},
		Job:         []string{"kill all processes when the job closes", "no breakaway", "UI limits"},
		Desktop:     `a private desktop WinSta0\srt-sb-<random>; the command refuses to run on Default`,
		Mitigations: []string{"extension points disabled", "non-system fonts disabled", "no remote images", "no low-label images"},
		Handles:     "stdin, stdout and stderr only; the process starts suspended, joins the job, then resumes",
		ExitCodes: []ExitCode{{15, "the machine is not provisioned"}, {16, "the working directory is on a mapped network drive"}, {18, "the Secondary Logon service is disabled"},
			{19, "loopback mode mismatch"}, {25, "a profile grant or forget is in progress"}, {26, "the holder process died; the command was killed"}},
	}
	def := []policy.Origin{policy.Default}
	ops := []Operation{
		{Op: "refuse-per-command-grants", Purpose: "a command's own allowRead or allowWrite (customConfig, library API) is refused: only the session grants", OnFailure: "error before anything launches", CausedBy: def},
		{Op: "per-command-denies", Condition: "only when the embedder passes customConfig.filesystem.denyRead/denyWrite or per-command credential files (library API; a settings file cannot)",
			Purpose: "--deny-read P / --deny-write P for each such path the session has not stamped already, and --deny-read-except G for each topmost session grant strictly beneath a per-command read deny (so that it keeps its rank)", CausedBy: def},
		e.checkLoopback("the command's network.allowLocalBinding equals the session's"),
		{Op: "check-command-line-length", Check: &Check{Expect: "the helper's command line, the command included, stays within the limit", Limit: MaxCommandLine, Estimate: estimate},
			Purpose: "the estimate counts the argv below without the command, run-time values at the length of their placeholders", OnFailure: "argv_too_long", CausedBy: originsOf(e.write)},
		{Op: "exec", Exec: ex, Purpose: "the helper (broker, as the user) reads the account's credential, starts the runner as the sandbox account (CreateProcessWithLogonW, with its own profile, on the private desktop, in the caller's working directory), which starts the command under the token below",
			CausedBy: orDefault(append([]policy.Origin{e.w.SrtWinPath.Origin}, originsOf(e.write)...))},
	}
	return Phase{Name: "perCommand", RunsAs: "the user (broker), then the sandbox account (runner and command)", When: "for each command", Operations: ops}, nil
}

func (e *emitter) srtWin() string {
	if e.w.SrtWinPath.Value == "" {
		return "<srt-win.exe packaged with srt (windows.srtWin.path is not set)>"
	}
	return e.w.SrtWinPath.Value
}

// commandLineLength estimates the Windows command line of argv: the words,
// a space between them, and a pair of quotes around a word that needs them.
func commandLineLength(argv []string) int {
	n := 0
	for _, a := range argv {
		n += len(a) + 1
		if a == "" || strings.ContainsAny(a, " \t\"") {
			n += 2 + strings.Count(a, `"`)
		}
	}
	return n
}

// environment builds the command's environment (docs/reference.md#windows-exec --env overlay).
func (e *emitter) environment() Environment {
	env := Environment{
		Base:      "the sandbox account's own profile environment (its USERPROFILE, TEMP, APPDATA and HKCU); nothing of the caller's environment is inherited but what the layers set",
		MergeRule: "layers apply in order; names compare ignoring case and a later layer replaces both name and value, so no name appears in two spellings (two spellings break .NET process start); the proxy variables have one spelling each: http_proxy https_proxy ftp_proxy all_proxy no_proxy grpc_proxy in lower case, RSYNC_PROXY in upper case",
	}
	host := EnvLayer{Name: "1 host", Vars: []EnvVar{{Name: "PATH", Value: "<caller's PATH>"}, {Name: "PATHEXT", Value: "<caller's PATHEXT>"},
		{Name: "NODE_USE_ENV_PROXY", Value: "1", CausedBy: []policy.Origin{e.origin("network.allowedDomains")}}}}
	caller := EnvLayer{Name: "2 caller (credential sentinels, then the embedder's setEnvVars)", Vars: []EnvVar{}}
	for _, m := range e.p.Env.Mask {
		caller.Vars = append(caller.Vars, EnvVar{Name: m.Name, Value: "<sentinel for " + m.Name + ">", CausedBy: []policy.Origin{m.Origin}})
	}
	for _, u := range e.p.Env.Unset {
		env.NotInherited = append(env.NotInherited, EnvVar{Name: u.Name, CausedBy: []policy.Origin{u.Origin}})
	}
	env.Layers = []EnvLayer{host, caller, e.proxyLayer()}
	env.GitConfig = e.gitConfig()
	return env
}

func (e *emitter) proxyLayer() EnvLayer {
	n := e.p.Network
	net := []policy.Origin{e.origin("network.allowedDomains")}
	l := EnvLayer{Name: "3 proxy (no TMPDIR, NO_PROXY or GIT_SSH_COMMAND on Windows)"}
	add := func(name, value string, by ...policy.Origin) {
		if len(by) == 0 {
			by = net
		}
		l.Vars = append(l.Vars, EnvVar{Name: name, Value: value, CausedBy: by})
	}
	add("SANDBOX_RUNTIME", "1", policy.Default)
	if n.TLSTerminate {
		for _, v := range caVars {
			add(v, "<trust bundle path, with forward slashes>", e.origin("network.tlsTerminate"))
		}
	}
	const user = "srt.<base64 of the command, percent-encoded>:<proxy token>@"
	httpHost, httpUser := "localhost:<proxy port>", user
	if n.HTTPProxyPort != 0 {
		httpHost, httpUser = fmt.Sprintf("localhost:%d", n.HTTPProxyPort), ""
	}
	socksHost, socksUser := "localhost:<proxy port>", user
	if n.SOCKSProxyPort != 0 {
		socksHost, socksUser = fmt.Sprintf("localhost:%d", n.SOCKSProxyPort), ""
	}
	httpURL := "http://" + httpUser + httpHost
	add("http_proxy", httpURL)
	add("https_proxy", httpURL)
	if httpUser != "" {
		add("GIT_CONFIG_PARAMETERS", "'http.proxyAuthMethod=basic'")
	}
	add("all_proxy", httpURL)
	add("grpc_proxy", httpURL)
	add("ftp_proxy", "socks5h://"+socksUser+socksHost)
	add("RSYNC_PROXY", socksHost)
	add("DOCKER_HTTP_PROXY", httpURL)
	add("DOCKER_HTTPS_PROXY", httpURL)
	add("CLOUDSDK_PROXY_TYPE", "http")
	add("CLOUDSDK_PROXY_ADDRESS", "localhost")
	add("CLOUDSDK_PROXY_PORT", strings.TrimPrefix(httpHost, "localhost:"))
	if httpUser != "" {
		add("CLOUDSDK_PROXY_USERNAME", "srt.<base64 of the command>")
		add("CLOUDSDK_PROXY_PASSWORD", "<proxy token>")
	}
	if e.loopbackOpen() {
		e.noProxy(add)
	}
	return l
}

// noProxy adds no_proxy for open loopback: the loopback names, less those
// the allow list names, which go through the proxy as on Linux and macOS
// (policy.CommandNoProxy); nothing when none is left.
func (e *emitter) noProxy(add func(name, value string, by ...policy.Origin)) {
	v, left := policy.CommandNoProxy(policy.OpenLoopbackNoProxy, e.p.Network.Allowed)
	if v == "" {
		return
	}
	by := []policy.Origin{e.origin("network.allowLocalBinding")}
	for _, o := range left {
		if !slices.Contains(by, o.Rule.Origin) {
			by = append(by, o.Rule.Origin)
		}
	}
	add("no_proxy", v, by...)
}

// maxSafeDirectories is how many directories get their own safe.directory
// entries; more become one "*".
const maxSafeDirectories = 8

func (e *emitter) gitConfig() GitConfig {
	dirs := []string{slashes(policy.Cwd.Path())}
	for _, w := range e.write {
		p, _ := target(w)
		dirs = append(dirs, strings.ReplaceAll(p, `\`, "/"))
	}
	for _, d := range e.p.Env.GitSafeDirectories {
		dirs = append(dirs, strings.ReplaceAll(d, `\`, "/"))
	}
	seen := map[string]bool{}
	var distinct []string
	for _, d := range dirs {
		if k := strings.ToLower(d); !seen[k] {
			seen[k] = true
			distinct = append(distinct, d)
		}
	}
	g := GitConfig{Numbering: "GIT_CONFIG_KEY_<n+i> and GIT_CONFIG_VALUE_<n+i> for the i-th entry, where n is the caller's GIT_CONFIG_COUNT (0 when unset), then GIT_CONFIG_COUNT=<n+entries> last; a caller that sets GIT_CONFIG_COUNT=0 gets no GIT_CONFIG_* variables at all"}
	if len(distinct) > maxSafeDirectories {
		g.Entries = append(g.Entries, GitConfigKV{"safe.directory", "*"})
	} else {
		for _, d := range distinct {
			g.Entries = append(g.Entries, GitConfigKV{"safe.directory", d}, GitConfigKV{"safe.directory", strings.TrimSuffix(d, "/") + "/*"})
		}
	}
	if e.p.Network.TLSTerminate {
		g.Entries = append(g.Entries, GitConfigKV{"http.schannelUseSSLCAInfo", "true"}, GitConfigKV{"http.schannelCheckRevoke", "false"})
	}
	g.Entries = append(g.Entries, GitConfigKV{"http.sslBackend", "openssl"})
	return g
}
