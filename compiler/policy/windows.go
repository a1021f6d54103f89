package policy

// Windows holds what only a Windows reading of a settings file has: the
// windows.* keys with their defaults filled in, each with its Origin.
//
// When Policy.Windows is set, the paths of the policy follow these rules
// (docs/reference.md#windows-session, docs/reference.md#windows-paths): separators are written "/" (the
// emitter renders "\"); a drive letter is upper case ("C:/x"); a UNC path
// starts with "//" ("//server/share/x"); the \\?\ and \\?\UNC\ prefixes
// are gone; %USERPROFILE% and ~ are Home, %HOMEDRIVE% HomeDrive,
// %HOMEDRIVE%%HOMEPATH% HomeDrivePath, and a relative path starts at Cwd. Only * and ?
// make a pattern; [ and ] are name characters. Names compare ignoring case,
// which the policy leaves to its readers: spellings are kept as written.
// There are no default writable paths and no mandatory denies on Windows
// (the reference has none); the emitter says so in the plan.
type Windows struct {
	// Backend is windows.backend: "srt-win" (the default) or "mxc".
	Backend Setting `json:"backend"`
	// SandboxUser is the local account commands run as.
	SandboxUser Setting `json:"sandboxUser"`
	// SublayerGUID is the WFP sublayer the filters live in, braced and
	// lower case ("{2c5d0ad6-…}"); from windows.sublayerGuid or its
	// deprecated alias windows.wfpSublayerGuid.
	SublayerGUID Setting `json:"sublayerGuid"`
	// ProxyPortRange is the inclusive loopback port range the proxies bind
	// in and the WFP filters let the sandbox reach.
	ProxyPortRange PortRange `json:"proxyPortRange"`
	// SrtWinPath is windows.srtWin.path, the helper executable; its Value
	// is "" when the key is absent.
	SrtWinPath Setting `json:"srtWinPath"`
	// SkippedLiterals are {"path": …, "literal": true} entries containing
	// * or ?, which no Windows file name can contain: the reference skips
	// them, and so do the emitters (they can name nothing).
	SkippedLiterals []PathRule `json:"skippedLiterals,omitempty"`
	// KeyOrigins are the origins of the cross-platform keys that change
	// the Windows plan (network.allowLocalBinding, network.tlsTerminate,
	// filesystem.disabled, …), for those the file writes; the policy
	// itself keeps only their values.
	KeyOrigins map[string]Origin `json:"keyOrigins,omitempty"`
}

// Setting is one string setting with the Origin of its value (Default when
// the key was absent).
type Setting struct {
	Value  string `json:"value"`
	Origin Origin `json:"origin"`
}

// PortRange is an inclusive range of TCP ports.
type PortRange struct {
	Low    int    `json:"low"`
	High   int    `json:"high"`
	Origin Origin `json:"origin"`
}

// The defaults of the windows.* keys (docs/reference.md#settings-keys,
// docs/reference.md#windows-install).
const (
	DefaultWindowsBackend = "srt-win"
	DefaultSandboxUser    = "srt-sandbox"
	DefaultSublayerGUID   = "{2c5d0ad6-5f3b-4d4e-9b8f-1a3e7c9d0b21}"
	DefaultProxyPortLow   = 60080
	DefaultProxyPortHigh  = 60089
)
