package policy

import (
	"path"
	"strings"
)

// FormatVersion is the version of the Policy shape, written in artifacts so
// that a runtime can refuse a plan it does not understand. Version 2 holds
// the host patterns (TLSTerminate.ExcludeDomains, MitmProxy.Domains,
// Masking.InjectHosts) parsed, as HostLists, where version 1 held the
// strings.
const FormatVersion = 2

// MandatoryFiles and MandatoryDirs are always write-protected in the working
// directory and, up to mandatoryDenySearchDepth, below it
// (docs/reference.md#mandatory-denies): shell start-up files, git and editor configuration, agent
// commands.
var (
	MandatoryFiles = []string{".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules", ".ripgreprc", ".mcp.json"}
	MandatoryDirs  = []string{".vscode", ".idea", ".claude/commands", ".claude/agents"}
)

// The names in a repository's git directory (.git, and each submodule's
// under .git/modules) that the mandatory denies protect: each can make the
// user's next git command run a program, or read a configuration, that the
// sandboxed command wrote.
var (
	// GitDirs: hooks are programs; worktrees holds each linked working
	// tree's commondir and config.worktree.
	GitDirs = []string{"hooks", "worktrees"}
	// GitFiles: commondir moves the configuration and the hooks to a
	// directory the command chooses.
	GitFiles = []string{"commondir"}
	// GitConfigFiles are protected unless filesystem.allowGitConfig:
	// config, and config.worktree, which git reads with it.
	GitConfigFiles = []string{"config", "config.worktree"}
)

// Policy is one settings file compiled: everything the sandbox enforces, in
// platform-neutral terms, each rule with its Origin. Lists keep the order of
// the settings file; nothing in a Policy depends on the host.
type Policy struct {
	FormatVersion int        `json:"formatVersion"`
	Source        string     `json:"source"`       // the settings file's name
	SourceSHA256  string     `json:"sourceSha256"` // of its bytes, hex
	Network       Network    `json:"network"`
	Filesystem    Filesystem `json:"filesystem"`
	Process       Process    `json:"process"`
	Env           Env        `json:"env"`
	// IgnoreViolations is ignoreViolations: command pattern ("*" for
	// every command) -> patterns of violation lines not to record.
	IgnoreViolations map[string][]string `json:"ignoreViolations,omitempty"`
	// Windows is set when the file was compiled with the Windows path
	// rules (schema.OSWindows): every path above was then read the Windows
	// way (see the Windows type), and the windows.* keys are here.
	Windows *Windows `json:"windows,omitempty"`
	// Switches holds the Origin of every switch the settings set, by key
	// ("network.allowAllUnixSockets"), for the review tools' answers. The
	// compiler records each where it reads it; an artifact does not carry
	// them (the rules it carries have their own origins).
	Switches map[string]Origin `json:"-"`
}

// Origin says which setting produced a rule: its key and where it was
// written, or "default" or "mandatory" for rules no setting asked for.
type Origin struct {
	Key string `json:"key"`           // "filesystem.denyRead[2]", "default", "mandatory"
	Pos string `json:"pos,omitempty"` // "file:line:col"
}

// Built-in origins.
var (
	Default   = Origin{Key: "default"}
	Mandatory = Origin{Key: "mandatory"}
)

// Network is what the proxies enforce (docs/reference.md#grammar, docs/reference.md#resolved-address-guard).
type Network struct {
	Allowed HostList `json:"allowed"`
	Denied  HostList `json:"denied"`
	// DeniedReasons maps a deniedDomains entry, as written, to the reason
	// shown when it refuses a connection.
	DeniedReasons           map[string]string `json:"deniedReasons,omitempty"`
	StrictAllowlist         bool              `json:"strictAllowlist,omitempty"`
	DeniedResolvedAddresses []AddressRule     `json:"deniedResolvedAddresses,omitempty"`
	// AllowUnixSockets are the unix-socket paths macOS lets the command
	// use; Linux cannot filter by path and ignores them.
	AllowUnixSockets    []PathRule `json:"allowUnixSockets,omitempty"`
	AllowAllUnixSockets bool       `json:"allowAllUnixSockets,omitempty"`
	AllowLocalBinding   bool       `json:"allowLocalBinding,omitempty"`
	AllowMachLookup     []string   `json:"allowMachLookup,omitempty"`
	// HTTPProxyPort and SOCKSProxyPort name external proxies; 0 means srt
	// runs its own.
	HTTPProxyPort  int `json:"httpProxyPort,omitempty"`
	SOCKSProxyPort int `json:"socksProxyPort,omitempty"`
	// MitmProxy routes the connections to Domains through an upstream
	// proxy on a Unix socket, after the allow and deny lists.
	MitmProxy *MitmProxy `json:"mitmProxy,omitempty"`
	// TLSTerminate is set when network.tlsTerminate is present.
	TLSTerminate bool `json:"tlsTerminate,omitempty"`
	// TLS holds network.tlsTerminate's options when it is present.
	TLS *TLSTerminate `json:"tls,omitempty"`
	// ParentProxy is the upstream proxy srt itself must use, if set.
	ParentProxy *ParentProxy `json:"parentProxy,omitempty"`
}

// TLSTerminate is network.tlsTerminate: the run's CA (both paths, or
// neither for an ephemeral one), the hosts tunnelled opaquely, the extra
// trusted CAs, and the limits (0 means the default).
type TLSTerminate struct {
	CACertPath string `json:"caCertPath,omitempty"`
	CAKeyPath  string `json:"caKeyPath,omitempty"`
	// ExcludeDomains are the host patterns (ParseHostPattern) whose
	// connections are tunnelled opaquely; match them with port 0.
	ExcludeDomains     HostList `json:"excludeDomains,omitempty"`
	ExtraCACertPaths   []string `json:"extraCaCertPaths,omitempty"`
	MaxTunnels         int      `json:"maxTunnels,omitempty"`
	HandshakeTimeoutMs int      `json:"handshakeTimeoutMs,omitempty"`
	Origin             Origin   `json:"origin"`
}

// MitmProxy is network.mitmProxy.
type MitmProxy struct {
	SocketPath string `json:"socketPath"`
	// Domains are the host patterns (ParseHostPattern) routed to the
	// socket; Match reads them.
	Domains HostList `json:"domains"`
}

// ParentProxy is network.parentProxy.
type ParentProxy struct {
	HTTP    string `json:"http,omitempty"`
	HTTPS   string `json:"https,omitempty"`
	NoProxy string `json:"noProxy,omitempty"`
}

// Filesystem is the file-system policy (docs/reference.md#fs-precedence).
type Filesystem struct {
	// Disabled turns the file-system policy off: everything is readable
	// and writable, and no mandatory deny applies.
	Disabled bool `json:"disabled,omitempty"`
	// Read is deny-then-allow: DenyRead hides a region, AllowRead opens
	// again what it names inside one (but not a more specific deny).
	DenyRead  []PathRule `json:"denyRead"`
	AllowRead []PathRule `json:"allowRead"`
	// Write is allow-only: AllowWrite grants subtrees (the defaults
	// first), DenyWrite carves out of them and wins even at or above an
	// AllowWrite root.
	AllowWrite []PathRule `json:"allowWrite"`
	DenyWrite  []PathRule `json:"denyWrite"`
	// MandatoryScan finds the mandatory denies below the working
	// directory at run time; the ones directly in it are in DenyWrite.
	MandatoryScan *MandatoryScan `json:"mandatoryScan,omitempty"`
	// CredentialMasks are credentials.files entries in mask mode: Linux
	// shows the command a copy with the secrets replaced; macOS and
	// Windows deny reading them instead (they are also in DenyRead there
	// by the emitters' choice, not here).
	CredentialMasks []PathRule `json:"credentialMasks,omitempty"`
}

// MandatoryScan describes the search for dangerous names below the working
// directory (docs/reference.md#mandatory-denies).
type MandatoryScan struct {
	// Depth is mandatoryDenySearchDepth: a dangerous file counts if its
	// directory is at most Depth-1 levels below the working directory, a
	// dangerous directory or repository if its parent is at most Depth-2.
	Depth int      `json:"depth"`
	Files []string `json:"files"`
	Dirs  []string `json:"dirs"`
	// GitConfig is whether a repository's .git/config is protected, like
	// its hooks (false under filesystem.allowGitConfig).
	GitConfig bool `json:"gitConfig"`
	// GitDirs and GitFiles are the names protected in every git directory
	// the scan finds (GitDirs, and GitFiles with GitConfigFiles unless
	// allowGitConfig).
	GitDirs  []string `json:"gitDirs"`
	GitFiles []string `json:"gitFiles"`
	Origin   Origin   `json:"origin"`
}

// A PathRule names a path or a pattern of paths.
type PathRule struct {
	// Path is absolute, or starts with a symbolic root (${HOME}, ${CWD}).
	// It is clean (see the Path type), and has no trailing "/**" (which
	// means the directory and everything beneath, as the plain path
	// does). A relative spelling has "." and ".." folded, as resolving it
	// against the working directory does; in an absolute or ~ path ".."
	// is kept, to be folded where the path exists.
	Path Path `json:"path"`
	// Written is the entry as the settings wrote it, when Path folded a
	// ".." of it ("./app/../conf" for ${CWD}/conf), for explanations.
	Written string `json:"written,omitempty"`
	// Pattern is set when Path contains glob characters (* ? [ ]): it is
	// read as a pattern and also, where the name exists, as that name.
	Pattern bool `json:"pattern,omitempty"`
	// Literal is set for {"path": ..., "literal": true}: the name only.
	Literal bool `json:"literal,omitempty"`
	// Convenience marks a default writable directory (~/.npm/_logs,
	// ~/.claude/debug) that is dropped when a read deny hides it; the
	// compiler checks spellings, the resolve step checks real paths.
	Convenience bool `json:"convenience,omitempty"`
	// TrailingSeparator records that the entry was written with a
	// trailing separator. In a Windows reading (\ or /, any entry): a
	// deny on a path that does not exist then creates a directory
	// placeholder, not a file (docs/reference.md#windows-paths). In a
	// POSIX reading (/, only an entry with glob characters, "/data/in/*/"):
	// the entry names directories; macOS grants, for an allow, only what
	// lies inside the directories it matches, never a file the glob alone
	// would match. Linux drops the separator (each match, file or
	// directory, with its contents). A deny ignores it (a deny may only
	// grow).
	TrailingSeparator bool `json:"trailingSeparator,omitempty"`
	// Mask, for a credentials.files entry in mask mode
	// (Filesystem.CredentialMasks), says what of the file is secret.
	Mask   *Masking `json:"mask,omitempty"`
	Origin Origin   `json:"origin"`
}

// WritesCwdAtHome returns the allowWrite entry of p that grants the
// working directory itself (".", "./"), when the working directory cwd is
// the home directory home: the entry then grants the whole home directory
// (shell start-up files, ~/.ssh, every tool's configuration). ok is false
// otherwise, or when cwd or home is "".
func WritesCwdAtHome(p *Policy, cwd, home string) (r PathRule, ok bool) {
	if cwd == "" || home == "" || path.Clean(cwd) != path.Clean(home) {
		return PathRule{}, false
	}
	for _, r := range p.Filesystem.AllowWrite {
		if r.Path == Cwd.Path() && r.Origin != Default && r.Origin != Mandatory {
			return r, true
		}
	}
	return PathRule{}, false
}

// Process holds the process-isolation switches.
type Process struct {
	// Seccomp lists the seccomp rule sets the command runs under, in the
	// order a program applies them: SeccompKeyring always, SeccompUnix
	// unless allowAllUnixSockets, SeccompNamespaces unless
	// allowNestedUserNamespaces.
	Seccomp                      []SeccompRule `json:"seccomp"`
	EnableWeakerNestedSandbox    bool          `json:"enableWeakerNestedSandbox,omitempty"`
	AllowNestedUserNamespaces    bool          `json:"allowNestedUserNamespaces,omitempty"`
	EnableWeakerNetworkIsolation bool          `json:"enableWeakerNetworkIsolation,omitempty"`
	AllowAppleEvents             bool          `json:"allowAppleEvents,omitempty"`
	AllowPty                     bool          `json:"allowPty,omitempty"`
	// BwrapPath is the bubblewrap binary to use; "" means bwrap on PATH.
	BwrapPath string `json:"bwrapPath,omitempty"`
	// Limits are the resource limits of each sandbox (limits), in the
	// order of LimitKinds; none when the settings set none.
	Limits []Limit `json:"limits,omitempty"`
}

// Env is what the sandbox does to the command's environment, beyond the
// proxy variables the runtime sets.
type Env struct {
	// Unset are credentials.envVars in deny mode.
	Unset []EnvRule `json:"unset,omitempty"`
	// Mask are credentials.envVars in mask mode: the command sees a
	// sentinel, the proxy swaps in the real value on egress.
	Mask []EnvRule `json:"mask,omitempty"`
	// AllowPlaintextInject lets the proxy swap masked values into plain
	// HTTP requests (credentials.allowPlaintextInject).
	AllowPlaintextInject bool `json:"allowPlaintextInject,omitempty"`
	// AWSPairs link masked variables into AWS credentials, whose SigV4
	// requests the proxy re-signs with the real secret: the pairs of
	// credentials.awsPairs, then the standard AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) when all are masked
	// whole and none is named in a pair.
	AWSPairs []AWSPair `json:"awsPairs,omitempty"`
	// SigV4 is what the proxy does with the SigV4 requests it cannot
	// re-sign (credentials.sigv4); nil means deny all three shapes.
	SigV4 *SigV4 `json:"sigv4,omitempty"`
	// GitSafeDirectories are marked safe.directory through GIT_CONFIG_*
	// variables; the runtime numbers them after any inherited
	// GIT_CONFIG_COUNT (docs/reference.md#linux-environment).
	GitSafeDirectories []string `json:"gitSafeDirectories,omitempty"`
}

// InjectScope is the list of hosts that receive the real value of a
// credential masked by m: its injectHosts, or when they are not set the
// allowed hosts, with ports cleared (ports are not part of an inject
// scope). Match it with port 0.
func (m Masking) InjectScope(allowed HostList) HostList {
	src := allowed
	if m.InjectHosts != nil {
		src = m.InjectHosts
	}
	out := make(HostList, len(src))
	for i, r := range src {
		r.Port = 0
		out[i] = r
	}
	return out
}

// BodyInjectScope is the list of hosts that receive the real value of a
// credential masked by m in request bodies and in header fields that
// carry no credential, ports cleared: its BodyInjectHosts. Match it with
// port 0.
func (m Masking) BodyInjectScope() HostList {
	out := make(HostList, len(m.BodyInjectHosts))
	for i, r := range m.BodyInjectHosts {
		r.Port = 0
		out[i] = r
	}
	return out
}

// EnvRule names one environment variable.
type EnvRule struct {
	Name string `json:"name"`
	// Masking, for a masked variable.
	Masking
	Origin Origin `json:"origin"`
}

// Masking says which part of a masked credential is secret and where its
// real value may go (credentials.envVars and credentials.files entries in
// mask mode).
type Masking struct {
	// InjectHosts are the host patterns (ParseHostPattern) the proxy may
	// send the real value to; nil means the allowed hosts. It is never
	// empty: the compiler refuses an empty injectHosts, which a plan could
	// not tell from nil.
	InjectHosts HostList `json:"injectHosts,omitempty"`
	// BodyInjectHosts are the inject hosts that also receive the real
	// value in request bodies and in header fields that carry no
	// credential (bodyInjectHosts, srt's own key); none means the real
	// value goes only into the header fields that carry credentials.
	BodyInjectHosts HostList `json:"bodyInjectHosts,omitempty"`
	// Extract is an ECMAScript regular expression: the first group of
	// each match is secret, the rest stays readable. Empty: the whole
	// value is secret.
	Extract string `json:"extract,omitempty"`
	// OnExtractNoMatch is what happens when Extract or Decode finds no
	// secret; "" means NoMatchWarn.
	OnExtractNoMatch NoMatchAction `json:"onExtractNoMatch,omitempty"`
	// Decode, when DecodeJWT, says the secrets are JSON Web Tokens (found
	// by Extract, or by their shape), each shown as a fake token.
	Decode Decoder `json:"decode,omitempty"`
	// MaskClaims, with Decode, masks only these claims of each token; the
	// others stay readable in the fake token.
	MaskClaims []string `json:"maskClaims,omitempty"`
	// MaskDuplicates, for a file, also replaces the secrets where they
	// appear elsewhere in the file.
	MaskDuplicates bool `json:"maskDuplicates,omitempty"`
}

// An AWSPair names the masked variables of one AWS credential.
type AWSPair struct {
	AccessKeyIDVar     string `json:"accessKeyIdVar"`
	SecretAccessKeyVar string `json:"secretAccessKeyVar"`
	// SessionTokenVar is "" without a session token.
	SessionTokenVar string `json:"sessionTokenVar,omitempty"`
	// Origin is the awsPairs entry, or credentials.envVars for the
	// standard variables paired automatically.
	Origin Origin `json:"origin"`
}

// SigV4 is the policy for the SigV4 request shapes that cannot be
// re-signed; "" means SigV4Deny.
type SigV4 struct {
	// Streaming: aws-chunked uploads (a STREAMING-… payload hash), whose
	// every chunk is signed with the client's key.
	Streaming SigV4Mode `json:"streaming,omitempty"`
	// Presigned: URLs that carry X-Amz-Signature in the query.
	Presigned SigV4Mode `json:"presigned,omitempty"`
	// SigV4A: AWS4-ECDSA-P256-SHA256 signatures, whose key is derived
	// from the secret by a different scheme.
	SigV4A SigV4Mode `json:"sigv4a,omitempty"`
}

// GitSafeValues are the safe.directory values for dirs
// (docs/reference.md#linux-environment): each directory and everything below it, or "*" for more than
// eight. Both runtimes number them after any inherited GIT_CONFIG_COUNT.
func GitSafeValues(dirs []string) []string {
	if len(dirs) > 8 {
		return []string{"*"}
	}
	var values []string
	for _, d := range dirs {
		values = append(values, d, strings.TrimSuffix(d, "/")+"/*")
	}
	return values
}
