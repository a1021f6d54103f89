package policy

import "strings"

// A StateKind is one kind of srt's own files. No sandbox may change
// them, whatever the settings say: a command that could would change the
// policy that confines it or a later run. They are host facts (where the
// settings file or srt's state directory is on this machine), so a
// policy names the kinds and the runtime fills in the paths; every
// artifact records them as mandatory, with the reason.
type StateKind string

// The kinds of srt's own files.
const (
	// StatePolicy is the settings file or the plan directory the run was
	// started from (and the user's default settings file, and the
	// project's .srt-settings.json in the working directory and each
	// directory above, which srt's notice can name).
	StatePolicy StateKind = "policy"
	// StatePrograms are srt, srt-main, srt-init, srtc and bubblewrap, which read, compile and
	// enforce the policy.
	StatePrograms StateKind = "programs"
	// StateCache holds compiled policies.
	StateCache StateKind = "cache"
	// StateRegistry holds the runs' records, their scratch space (masked
	// copies, trust bundles, placeholders' source) and what their write
	// roots held (the snapshots the check after a run compares with).
	StateRegistry StateKind = "registry"
	// StateAuditLog is the audit log srt writes for the run (--audit-log).
	StateAuditLog StateKind = "audit-log"
	// StateTrust records the plans the user trusts to run (srt run
	// --plan runs no other).
	StateTrust StateKind = "trust"
	// StateQuarantine holds what earlier runs wrote and srt moved out of
	// the user's tree: hidden, not even readable.
	StateQuarantine StateKind = "quarantine"
)

// A StateRule says how a sandbox sees one kind of srt's own files.
type StateRule struct {
	Kind StateKind
	// Hidden: not readable either (else read-only).
	Hidden bool
	Why    string
}

// SrtState are srt's own files, in the order the runtime protects them.
var SrtState = []StateRule{
	{StatePolicy, false, "the settings file or plan directory in use, the default one, and a project's .srt-settings.json srt's notice can name: a command that changed one would choose a later run's rules"},
	{StatePrograms, false, "srt, srt-main, srt-init, srtc and bubblewrap, which read, compile and enforce the policy"},
	{StateCache, false, "compiled policies and what earlier checks saw of the write roots"},
	{StateRegistry, false, "the runs' records, scratch space and snapshots, which the check after a run trusts"},
	{StateAuditLog, false, "the audit log of the run"},
	{StateTrust, false, "the record of the plans the user trusts: a sandbox that could add to it could have a plan it rewrote run"},
	{StateQuarantine, true, "what earlier runs wrote and srt moved away: a sandbox must not read it, since it may hold another run's secrets, nor plant an item for the user to release"},
}

// StateWhy is the one-line reason every artifact gives for the rules of
// srt's own files.
const StateWhy = "srt's own files, whatever the settings say: a sandbox must not change the policy that confines it or a later run"

// StateOperand is how a Linux plan writes the rules of srt's own files:
// "read-only=KIND,... hidden=KIND,...".
func StateOperand() string {
	var ro, hidden []string
	for _, s := range SrtState {
		if s.Hidden {
			hidden = append(hidden, string(s.Kind))
		} else {
			ro = append(ro, string(s.Kind))
		}
	}
	return "read-only=" + strings.Join(ro, ",") + " hidden=" + strings.Join(hidden, ",")
}
