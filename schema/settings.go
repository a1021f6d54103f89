package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Settings is a validated settings file. Field names and JSON keys follow
// the grammar in settings.cue exactly (a test checks that every key of the
// grammar has a field here and the other way round). Optional keys that were
// absent are nil or empty; the meaning of absence is the compiler's business.
type Settings struct {
	// Schema is the "$schema" an editor uses; srt ignores it.
	Schema                       string              `json:"$schema,omitempty"`
	Network                      Network             `json:"network"`
	Filesystem                   Filesystem          `json:"filesystem"`
	Credentials                  *Credentials        `json:"credentials,omitempty"`
	IgnoreViolations             map[string][]string `json:"ignoreViolations,omitempty"`
	EnableWeakerNestedSandbox    *bool               `json:"enableWeakerNestedSandbox,omitempty"`
	AllowNestedUserNamespaces    *bool               `json:"allowNestedUserNamespaces,omitempty"`
	EnableWeakerNetworkIsolation *bool               `json:"enableWeakerNetworkIsolation,omitempty"`
	AllowAppleEvents             *bool               `json:"allowAppleEvents,omitempty"`
	Ripgrep                      *Ripgrep            `json:"ripgrep,omitempty"`
	MandatoryDenySearchDepth     *int                `json:"mandatoryDenySearchDepth,omitempty"`
	AllowPty                     *bool               `json:"allowPty,omitempty"`
	Seccomp                      *Seccomp            `json:"seccomp,omitempty"`
	BwrapPath                    *string             `json:"bwrapPath,omitempty"`
	SocatPath                    *string             `json:"socatPath,omitempty"`
	JavaAgentJarPath             *string             `json:"javaAgentJarPath,omitempty"`
	Windows                      *Windows            `json:"windows,omitempty"`
	Git                          *Git                `json:"git,omitempty"`
	Limits                       *Limits             `json:"limits,omitempty"`

	src *source // where each value was written; nil for settings built in Go
}

// A Position is where a value was written in a settings file.
type Position struct {
	File      string
	Line, Col int // 1-based; 0 when unknown
}

func (p Position) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Pos returns where the value at path was written, e.g.
// Pos(Path{"filesystem", "denyRead", 2}). For a path that names no value,
// or settings not loaded from a file, Line is 0.
func (s *Settings) Pos(path Path) Position {
	if s == nil || s.src == nil {
		return Position{}
	}
	p := Position{File: s.src.file}
	if n := path.lookup(s.src.root); n != nil {
		p.Line, p.Col = s.src.position(n.Off)
	}
	return p
}

// source is the parsed file behind a Settings value.
type source struct {
	file  string
	root  *node
	lines []int // offsets of '\n'
}

func (s *source) position(off int) (line, col int) {
	return lineCol(s.lines, off)
}

// Network is the "network" object (docs/reference.md#settings-keys).
type Network struct {
	AllowedDomains          []string          `json:"allowedDomains"`
	DeniedDomains           []string          `json:"deniedDomains"`
	DeniedDomainReasons     map[string]string `json:"deniedDomainReasons,omitempty"`
	StrictAllowlist         *bool             `json:"strictAllowlist,omitempty"`
	DeniedResolvedAddresses []string          `json:"deniedResolvedAddresses,omitempty"`
	AllowUnixSockets        []string          `json:"allowUnixSockets,omitempty"`
	AllowAllUnixSockets     *bool             `json:"allowAllUnixSockets,omitempty"`
	AllowLocalBinding       *bool             `json:"allowLocalBinding,omitempty"`
	AllowMachLookup         []string          `json:"allowMachLookup,omitempty"`
	HTTPProxyPort           *int              `json:"httpProxyPort,omitempty"`
	SOCKSProxyPort          *int              `json:"socksProxyPort,omitempty"`
	MitmProxy               *MitmProxy        `json:"mitmProxy,omitempty"`
	// FilterRequest is never valid in a file; it is here so that the Go
	// type and the grammar list the same keys.
	FilterRequest           json.RawMessage `json:"filterRequest,omitempty"`
	AllowPlaintextHeaderSet *bool           `json:"allowPlaintextHeaderSet,omitempty"`
	StripResponseHeaders    []string        `json:"stripResponseHeaders,omitempty"`
	RefuseOpaqueTunnels     *bool           `json:"refuseOpaqueTunnels,omitempty"`
	RequireHostMatch        *bool           `json:"requireHostMatch,omitempty"`
	AmbiguousRequestTarget  *string         `json:"ambiguousRequestTarget,omitempty"`
	TLSTerminate            *TLSTerminate   `json:"tlsTerminate,omitempty"`
	ParentProxy             *ParentProxy    `json:"parentProxy,omitempty"`
}

// TLSTerminate is "network.tlsTerminate" (docs/reference.md#settings-keys). Its presence, even
// empty, turns TLS termination on.
type TLSTerminate struct {
	CACertPath         *string  `json:"caCertPath,omitempty"`
	CAKeyPath          *string  `json:"caKeyPath,omitempty"`
	ExcludeDomains     []string `json:"excludeDomains,omitempty"`
	ExtraCACertPaths   []string `json:"extraCaCertPaths,omitempty"`
	MaxTunnels         *int     `json:"maxTunnels,omitempty"`
	HandshakeTimeoutMs *int     `json:"handshakeTimeoutMs,omitempty"`
}

// MitmProxy is "network.mitmProxy" (docs/reference.md#settings-keys).
type MitmProxy struct {
	SocketPath string   `json:"socketPath"`
	Domains    []string `json:"domains"`
}

// ParentProxy is "network.parentProxy" (docs/reference.md#settings-keys).
type ParentProxy struct {
	HTTP    *string `json:"http,omitempty"`
	HTTPS   *string `json:"https,omitempty"`
	NoProxy *string `json:"noProxy,omitempty"`
}

// Filesystem is the "filesystem" object (docs/reference.md#settings-keys).
type Filesystem struct {
	Disabled       *bool       `json:"disabled,omitempty"`
	DenyRead       []PathEntry `json:"denyRead"`
	AllowRead      []PathEntry `json:"allowRead,omitempty"`
	AllowWrite     []PathEntry `json:"allowWrite"`
	DenyWrite      []PathEntry `json:"denyWrite"`
	AllowGitConfig *bool       `json:"allowGitConfig,omitempty"`
}

// PathEntry is one filesystem list entry (docs/reference.md#grammar): a spelling that may be a
// glob, or, with Literal set, exactly one path.
type PathEntry struct {
	Path    string
	Literal bool
}

// MarshalJSON writes a plain string, or {"path": …, "literal": true}.
func (p PathEntry) MarshalJSON() ([]byte, error) {
	if p.Literal {
		return []byte(`{"path":` + strconv.Quote(p.Path) + `,"literal":true}`), nil
	}
	return json.Marshal(p.Path)
}

// UnmarshalJSON reads either form.
func (p *PathEntry) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var o struct {
			Path    string `json:"path"`
			Literal bool   `json:"literal"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if !o.Literal {
			return fmt.Errorf("a path object needs \"literal\": true")
		}
		*p = PathEntry{Path: o.Path, Literal: true}
		return nil
	}
	*p = PathEntry{}
	return json.Unmarshal(b, &p.Path)
}

// Credentials is the "credentials" object (docs/reference.md#settings-keys).
type Credentials struct {
	Files                []CredentialFile   `json:"files,omitempty"`
	EnvVars              []CredentialEnvVar `json:"envVars,omitempty"`
	AllowPlaintextInject *bool              `json:"allowPlaintextInject,omitempty"`
	AwsPairs             []AwsPair          `json:"awsPairs,omitempty"`
	SigV4                *SigV4             `json:"sigv4,omitempty"`
}

// CredentialOptions are shared by files and environment variables.
type CredentialOptions struct {
	Mode             string   `json:"mode"`
	Extract          *string  `json:"extract,omitempty"`
	OnExtractNoMatch *string  `json:"onExtractNoMatch,omitempty"`
	Decode           *string  `json:"decode,omitempty"`
	MaskClaims       []string `json:"maskClaims,omitempty"`
	// InjectHosts is nil when absent (meaning: the allowed hosts), and
	// non-nil when present.
	InjectHosts []string `json:"injectHosts,omitempty"`
	// BodyInjectHosts (srt's own key) are the inject hosts that also get
	// the real value in request bodies and in header fields that carry
	// no credential.
	BodyInjectHosts []string `json:"bodyInjectHosts,omitempty"`
}

// CredentialFile is one "credentials.files" entry (docs/reference.md#settings-keys).
type CredentialFile struct {
	CredentialOptions
	Path           string `json:"path"`
	MaskDuplicates *bool  `json:"maskDuplicates,omitempty"`
}

// CredentialEnvVar is one "credentials.envVars" entry (docs/reference.md#settings-keys).
type CredentialEnvVar struct {
	CredentialOptions
	Name string `json:"name"`
}

// AwsPair is one "credentials.awsPairs" entry (docs/reference.md#settings-keys).
type AwsPair struct {
	AccessKeyIDVar     string  `json:"accessKeyIdVar"`
	SecretAccessKeyVar string  `json:"secretAccessKeyVar"`
	SessionTokenVar    *string `json:"sessionTokenVar,omitempty"`
}

// SigV4 is "credentials.sigv4".
type SigV4 struct {
	Streaming *string `json:"streaming,omitempty"`
	Presigned *string `json:"presigned,omitempty"`
	SigV4A    *string `json:"sigv4a,omitempty"`
}

// Ripgrep is "ripgrep" (docs/reference.md#settings-keys).
type Ripgrep struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Argv0   *string  `json:"argv0,omitempty"`
}

// Seccomp is "seccomp" (docs/reference.md#settings-keys).
type Seccomp struct {
	ApplyPath *string `json:"applyPath,omitempty"`
	Argv0     *string `json:"argv0,omitempty"`
}

// Git is "git" (docs/reference.md#settings-keys).
type Git struct {
	SafeDirectories []string `json:"safeDirectories,omitempty"`
}

// Limits is "limits": srt's resource limits of one sandbox
// (docs/layers.md#resource-limits).
type Limits struct {
	MemoryMiB  *int `json:"memoryMiB,omitempty"`
	Processes  *int `json:"processes,omitempty"`
	CPUSeconds *int `json:"cpuSeconds,omitempty"`
	OpenFiles  *int `json:"openFiles,omitempty"`
}

// Windows is "windows" (docs/reference.md#settings-keys).
type Windows struct {
	Backend         *string `json:"backend,omitempty"`
	SandboxUser     *string `json:"sandboxUser,omitempty"`
	SublayerGUID    *string `json:"sublayerGuid,omitempty"`
	WfpSublayerGUID *string `json:"wfpSublayerGuid,omitempty"`
	ProxyPortRange  *[2]int `json:"proxyPortRange,omitempty"`
	SrtWin          *SrtWin `json:"srtWin,omitempty"`
}

// SrtWin is "windows.srtWin".
type SrtWin struct {
	Path string `json:"path"`
}

// decodeSettings converts a validated document into Settings. Numbers are
// written in canonical form first, so that 3.0 and 1e1 decode into ints.
func decodeSettings(root *node) (*Settings, error) {
	var b bytes.Buffer
	writeCanonical(&b, root)
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	var s Settings
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// writeCanonical writes n as compact JSON with integral numbers as integers.
func writeCanonical(b *bytes.Buffer, n *node) {
	switch n.Kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.Bool))
	case kindNumber:
		if n.integral() {
			b.WriteString(strconv.FormatFloat(n.Num, 'f', -1, 64))
		} else {
			b.WriteString(n.Str)
		}
	case kindString:
		s, _ := json.Marshal(n.Str)
		b.Write(s)
	case kindArray:
		b.WriteByte('[')
		for i, e := range n.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i, f := range n.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.Key)
			b.Write(k)
			b.WriteByte(':')
			writeCanonical(b, f.Value)
		}
		b.WriteByte('}')
	}
}
