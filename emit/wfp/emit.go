package wfp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"srt.dev/compiler/policy"
)

// Well-known identities, as the plan names them.
const (
	sidUser   = "sid:user"
	sidGroup  = "sid:group"
	sidUsers  = "S-1-5-32-545 (BUILTIN\\Users)"
	groupName = "sandbox-runtime-users"
)

// capSID is the identity a write root's grant and the command's token share.
func capSID(root string) string { return "sid:cap(" + root + ")" }

// Emit builds the Windows plan of p. p must come from the Windows reading
// of a settings file (p.Windows set). It refuses what the plan cannot
// honour rather than emit a weaker plan: the MXC backend, a proxy port the
// WFP fence would block, a command line over the Windows limit.
func Emit(p *policy.Policy) (*Plan, error) {
	w := p.Windows
	if w == nil {
		return nil, fmt.Errorf("wfp: the policy was compiled with the POSIX path rules; compile the settings for Windows (srtc compile --target windows)")
	}
	if w.Backend.Value != policy.DefaultWindowsBackend {
		return nil, fmt.Errorf("%s: %q: srtc emits plans for the srt-win backend only; the MXC backend (one OS container per command) has no plan yet: remove the key or set it to \"srt-win\"", where(w.Backend.Origin), w.Backend.Value)
	}
	if err := checkExternalPorts(p); err != nil {
		return nil, err
	}
	e := &emitter{p: p, w: w}
	e.rank()
	pl := &Plan{
		Format:       FormatName,
		Executed:     "no: srt does not execute Windows plans yet; this file is for review (nothing here has been run on a Windows machine)",
		Source:       p.Source,
		SourceSHA256: p.SourceSHA256,
		Notation:     notation(),
		Settings:     e.settings(),
		Phases: []Phase{
			e.install(),
			e.installUser(),
			e.sessionStart(),
		},
	}
	cmd, err := e.perCommand()
	if err != nil {
		return nil, err
	}
	pl.Phases = append(pl.Phases, cmd, e.sessionReset(), e.uninstall())
	pl.ResidualRisks = e.residualRisks()
	for i := range pl.Phases {
		for j := range pl.Phases[i].Operations {
			op := &pl.Phases[i].Operations[j]
			op.CausedBy = op.CausedBy.dedupe()
		}
	}
	return pl, nil
}

// Render writes a plan as indented JSON with a final newline. The same
// plan gives the same bytes.
func Render(pl *Plan) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(pl); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Bytes is Emit then Render: windows/plan.json for p.
func Bytes(p *policy.Policy) ([]byte, error) {
	pl, err := Emit(p)
	if err != nil {
		return nil, err
	}
	return Render(pl)
}

// where renders an origin for an error message: file:line:col: key.
func where(o policy.Origin) string {
	if o.Pos == "" {
		return o.Key
	}
	return o.Pos + ": " + o.Key
}

// checkExternalPorts refuses external proxy ports outside the range the
// WFP fence lets the sandbox reach: the command could not use them.
func checkExternalPorts(p *policy.Policy) error {
	r := p.Windows.ProxyPortRange
	for _, port := range []struct {
		key string
		n   int
	}{{"network.httpProxyPort", p.Network.HTTPProxyPort}, {"network.socksProxyPort", p.Network.SOCKSProxyPort}} {
		if port.n != 0 && (port.n < r.Low || port.n > r.High) {
			return fmt.Errorf("%s %d lies outside windows.proxyPortRange [%d, %d]: the WFP fence blocks the sandbox from reaching it; use a port inside the range or move the range", port.key, port.n, r.Low, r.High)
		}
	}
	return nil
}

type emitter struct {
	p *policy.Policy
	w *policy.Windows
	// The ranked lists (see rank).
	read, write, denyRead, denyWrite []policy.PathRule
	credDeny                         []policy.PathRule
	ranking                          []RankDecision
	// The grants ranking dropped (at or under a credential file): no
	// entry of the plan, but the ACL keeps them for its answers to name.
	droppedRead, droppedWrite []policy.PathRule
}

func (e *emitter) loopbackOpen() bool { return e.p.Network.AllowLocalBinding }

// origin returns the origin of a cross-platform key, or the key alone when
// the file does not write it.
func (e *emitter) origin(key string) policy.Origin {
	if e.w == nil {
		return policy.Origin{Key: key}
	}
	if o, ok := e.w.KeyOrigins[key]; ok {
		return o
	}
	return policy.Origin{Key: key}
}

func (e *emitter) settings() Settings {
	w := e.w
	s := Settings{
		Backend:        value(w.Backend.Value, w.Backend.Origin),
		SandboxUser:    value(w.SandboxUser.Value, w.SandboxUser.Origin),
		SandboxGroup:   groupName,
		SublayerGUID:   value(w.SublayerGUID.Value, w.SublayerGUID.Origin),
		ProxyPortRange: value(fmt.Sprintf("%d-%d", w.ProxyPortRange.Low, w.ProxyPortRange.High), w.ProxyPortRange.Origin),
		LoopbackOpen:   value(fmt.Sprint(e.loopbackOpen()), e.origin("network.allowLocalBinding")),
		SrtWinPath:     value(e.srtWin(), w.SrtWinPath.Origin),
		Filesystem:     "enforced",
	}
	if e.p.Filesystem.Disabled {
		s.Filesystem = "disabled (filesystem.disabled): no grants and no denies but masked credential files"
	}
	for _, r := range e.w.SkippedLiterals {
		s.Skipped = append(s.Skipped, SkippedSetting{Entry: win(r.Path), Reason: "a literal entry containing * or ? names nothing on Windows (no file name can contain them)", CausedBy: Causes{r.Origin}})
	}
	// The macOS-only keys (allowUnixSockets, allowMachLookup, allowPty, …)
	// leave no trace: the plan of a file with them is the plan without
	// them (docs/reference.md#windows-cases W25).
	return s
}

func value(v string, o policy.Origin) SettingValue { return SettingValue{Value: v, From: Causes{o}} }

func notation() []Term {
	return []Term{
		{"sid:user", "the SID of the sandbox account (windows.sandboxUser); it exists only after install"},
		{"sid:group", "the SID of the local group " + groupName + ", of which the sandbox account is a member"},
		{"sid:cap(P)", "an identifier belonging to write root P: its grant names it, and the command's token carries it as a restricting SID, so writes succeed only in the session's roots"},
		{"%USERPROFILE%, %HOMEDRIVE%, %HOMEPATH%", "the calling user's profile directory, its drive and its drive-less path, filled in at session start"},
		{"%CD%", "the working directory of the session (cmd.exe's name for it)"},
		{"<…>", "a value known only at run time (a port, a process id, the proxy token)"},
		{"(OI)(CI)", "object and container inherit: the entry applies to the directory and everything beneath it"},
		{"weight", "WFP picks the filter with the highest weight among those that match: the loopback permits outrank the block"},
		{"causedBy", "the settings entries behind an operation: the JSON path and file:line:col, written \"key @ file:line:col\"; \"default\" when no setting asked for it; a key without a position is not in the file, and its default applies"},
	}
}
