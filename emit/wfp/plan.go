package wfp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// FormatName is the value of Plan.Format; it changes when the shape does.
const FormatName = "srt-windows-plan/1"

// Plan is windows/plan.json: everything the Windows sandbox would do for one
// settings file, phase by phase, each operation with the settings entries
// that caused it. Field names are meant to be read without the spec.
type Plan struct {
	Format string `json:"format"`
	// Executed says that srt does not run this plan yet: it is for review.
	Executed string `json:"executed"`
	Source   string `json:"source"`
	// SourceSHA256 is the hash of the settings file's bytes, hex.
	SourceSHA256 string `json:"sourceSha256"`
	// Notation explains the symbolic names used in the plan.
	Notation []Term `json:"notation"`
	// Settings are the values the plan was built from.
	Settings Settings `json:"settings"`
	// Phases run in this order: install, installUser, sessionStart,
	// perCommand (once per command), sessionReset, uninstall.
	Phases []Phase `json:"phases"`
	// ResidualRisks are what the sandbox does not protect against,
	// (docs/reference.md#windows-residual-risks, docs/reference.md#windows-install and this project's own).
	ResidualRisks []ResidualRisk `json:"residualRisks"`
}

// Causes are the settings entries behind an operation. JSON spells each
// as its key and, when the file writes it, " @ file:line:col":
// "filesystem.denyRead[0] @ settings.json:3:17"; "default" when no setting
// asked for it; a key without a position is not in the file and its
// default applies.
type Causes []policy.Origin

// MarshalJSON writes the causes as strings.
func (c Causes) MarshalJSON() ([]byte, error) {
	return json.Marshal(c.strings())
}

func (c Causes) strings() []string {
	out := make([]string, len(c))
	for i, o := range c {
		out[i] = o.Key
		if o.Pos != "" {
			out[i] += " @ " + o.Pos
		}
	}
	return out
}

// String joins the causes with ", ".
func (c Causes) String() string { return strings.Join(c.strings(), ", ") }

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Causes) UnmarshalJSON(b []byte) error {
	var in []string
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*c = make(Causes, len(in))
	for i, s := range in {
		if j := strings.LastIndex(s, " @ "); j >= 0 {
			(*c)[i] = policy.Origin{Key: s[:j], Pos: s[j+3:]}
		} else {
			(*c)[i] = policy.Origin{Key: s}
		}
	}
	return nil
}

// dedupe drops repeated causes, keeping the first.
func (c Causes) dedupe() Causes {
	var out Causes
	seen := map[policy.Origin]bool{}
	for _, o := range c {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// Term is one entry of the plan's notation.
type Term struct {
	Term    string `json:"term"`
	Meaning string `json:"meaning"`
}

// Settings are the effective Windows settings, each with where its value
// comes from.
type Settings struct {
	Backend        SettingValue `json:"backend"`
	SandboxUser    SettingValue `json:"sandboxUser"`
	SandboxGroup   string       `json:"sandboxGroup"`
	SublayerGUID   SettingValue `json:"sublayerGuid"`
	ProxyPortRange SettingValue `json:"proxyPortRange"`
	// LoopbackOpen is network.allowLocalBinding: the sandbox may connect
	// to every loopback port (but 1), not only the proxy range.
	LoopbackOpen SettingValue `json:"loopbackOpen"`
	SrtWinPath   SettingValue `json:"srtWinPath"`
	// Filesystem is "enforced" or says why not.
	Filesystem string           `json:"filesystem"`
	Skipped    []SkippedSetting `json:"skippedSettings,omitempty"`
}

// SettingValue is one effective setting and the settings entry it comes
// from (or "default").
type SettingValue struct {
	Value string `json:"value"`
	From  Causes `json:"from"`
}

// SkippedSetting is a settings entry the plan leaves out, and why.
type SkippedSetting struct {
	Entry    string `json:"entry"`
	Reason   string `json:"reason"`
	CausedBy Causes `json:"causedBy"`
}

// Phase is an ordered list of operations run by one identity at one time.
type Phase struct {
	Name       string      `json:"name"`
	RunsAs     string      `json:"runsAs"`
	When       string      `json:"when"`
	Operations []Operation `json:"operations"`
}

// Operation is one step. Op names the kind; the fields that apply to it
// are set, the others are left out of the JSON.
type Operation struct {
	Op      string `json:"op"`
	Purpose string `json:"purpose"`
	// Condition limits when the step applies ("only if the path exists
	// at session start").
	Condition string `json:"condition,omitempty"`
	// OnFailure is what happens when the step fails: the error code the
	// session or command stops with.
	OnFailure string `json:"onFailure,omitempty"`
	// Unverified names what of this step is not established by the
	// published sources and must be checked on a real Windows machine.
	Unverified string `json:"unverified,omitempty"`

	Name     string         `json:"name,omitempty"`
	Group    string         `json:"group,omitempty"`
	Member   string         `json:"member,omitempty"`
	Account  *Account       `json:"account,omitempty"`
	Rights   []string       `json:"rights,omitempty"`
	Path     string         `json:"path,omitempty"`
	Kind     string         `json:"kind,omitempty"`
	Paths    []string       `json:"paths,omitempty"`
	ACE      *ACE           `json:"ace,omitempty"`
	ACEs     []ACE          `json:"aces,omitempty"`
	Registry *RegistryKey   `json:"registry,omitempty"`
	Sublayer *Sublayer      `json:"sublayer,omitempty"`
	Filter   *Filter        `json:"filter,omitempty"`
	Lists    *AccessLists   `json:"lists,omitempty"`
	Profile  *ProfileGrant  `json:"profile,omitempty"`
	Check    *Check         `json:"check,omitempty"`
	Exec     *Exec          `json:"exec,omitempty"`
	Ranking  []RankDecision `json:"ranking,omitempty"`

	CausedBy Causes `json:"causedBy"`
}

// Account is the local account commands run as.
type Account struct {
	Name      string   `json:"name"`
	Privilege string   `json:"privilege"`
	Flags     []string `json:"flags"`
	Password  string   `json:"password"`
}

// Mask is a Windows access mask; JSON spells it as 8 hex digits.
type Mask uint32

// MarshalJSON writes "0x001200A9".
func (m Mask) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`"0x%08X"`, uint32(m))), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Mask) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil || !strings.HasPrefix(s, "0x") {
		return fmt.Errorf("access mask %q: want 0x and 8 hex digits", s)
	}
	*m = Mask(v)
	return nil
}

// ACE is one access-control entry added to a path's DACL. Nothing is
// replaced: entries are added before the existing explicit ones.
type ACE struct {
	Path    string `json:"path"`
	Trustee string `json:"trustee"`
	Type    string `json:"type"` // "ALLOW" or "DENY"
	Mask    Mask   `json:"mask"`
	// Rights spells out Mask, one right per bit, joined by " | ".
	Rights string `json:"rights"`
	// Inheritance is "subtree (OI)(CI)" or "this object only".
	Inheritance string `json:"inheritance"`
	// Lifetime says when the entry is removed again.
	Lifetime string `json:"lifetime"`
}

// RegistryKey is a registry key written at install.
type RegistryKey struct {
	Key    string          `json:"key"`
	SDDL   string          `json:"sddl,omitempty"`
	Values []RegistryValue `json:"values,omitempty"`
}

// RegistryValue is one value under a key.
type RegistryValue struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Sublayer is the WFP sublayer the filters live in.
type Sublayer struct {
	GUID   string   `json:"guid"`
	Name   string   `json:"name"`
	Weight string   `json:"weight"`
	Flags  []string `json:"flags"`
}

// Filter is one WFP filter. All conditions must match (AND).
type Filter struct {
	DisplayName string      `json:"displayName"`
	Layer       string      `json:"layer"`
	Action      string      `json:"action"`
	Weight      string      `json:"weight"`
	Flags       []string    `json:"flags"`
	Conditions  []Condition `json:"conditions"`
	// ProviderData is the tag that later installs and uninstall find the
	// filter by (JSON text).
	ProviderData string `json:"providerData"`
}

// Condition is one WFP filter condition.
type Condition struct {
	Field   string `json:"field"`
	Match   string `json:"match"`
	Value   string `json:"value"`
	Meaning string `json:"meaning"`
}

// AccessLists are the four path lists a session hands the helper, in
// Windows spelling, after ranking.
type AccessLists struct {
	Read      []string `json:"read"`
	Write     []string `json:"write"`
	DenyRead  []string `json:"denyRead"`
	DenyWrite []string `json:"denyWrite"`
}

// RankDecision records an entry that ranking moved or dropped.
type RankDecision struct {
	Entry    string `json:"entry"`
	Decision string `json:"decision"`
	CausedBy Causes `json:"causedBy"`
}

// ProfileGrant is the read grant on the user's profile for the sandbox
// group.
type ProfileGrant struct {
	Trustee              string   `json:"trustee"`
	Mask                 Mask     `json:"mask"`
	GrantedWhole         []string `json:"grantedWhole"`
	ProtectedExclusions  []string `json:"protectedExclusions"`
	ExclusionsTreatment  string   `json:"exclusionsTreatment"`
	Containers           string   `json:"containers"`
	ExclusionsNotListed  string   `json:"exclusionsNotListed"`
	Skipped              string   `json:"skippedWhen"`
	ConflictRuleAtStart  string   `json:"conflictRuleAtSessionStart"`
	KnownConflictsInFile []string `json:"knownConflictsInThisFile,omitempty"`
}

// Check is a verification step and what it expects.
type Check struct {
	Expect       string   `json:"expect"`
	Values       []string `json:"values,omitempty"`
	SetupVersion int      `json:"setupVersion,omitempty"`
	Target       string   `json:"target,omitempty"`
	MustBlock    []string `json:"mustBlock,omitempty"`
	MustConnect  []string `json:"mustConnect,omitempty"`
	PortRange    []int    `json:"portRange,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	Estimate     int      `json:"estimate,omitempty"`
}

// Exec is the command launch: the helper's argv, the command's
// environment, and the token, job and desktop it runs under.
type Exec struct {
	// Argv is the helper's command line; <…> are run-time values.
	Argv        []string      `json:"argv"`
	Shells      []ShellChoice `json:"shellByBinShell"`
	Environment Environment   `json:"environment"`
	Token       Token         `json:"token"`
	Job         []string      `json:"job"`
	Desktop     string        `json:"desktop"`
	Mitigations []string      `json:"processMitigations"`
	Handles     string        `json:"inheritedHandles"`
	ExitCodes   []ExitCode    `json:"helperExitCodes"`
}

// ShellChoice is how binShell picks the shell that runs the command.
type ShellChoice struct {
	BinShell string   `json:"binShell"`
	Argv     []string `json:"argv"`
}

// Environment is the command's environment: the sandbox account's own,
// with layers applied in order.
type Environment struct {
	Base      string     `json:"base"`
	MergeRule string     `json:"mergeRule"`
	Layers    []EnvLayer `json:"layers"`
	// NotInherited are credentials.envVars in deny mode: absent because
	// nothing of the caller's environment is inherited but the layers.
	NotInherited []EnvVar  `json:"notInherited,omitempty"`
	GitConfig    GitConfig `json:"gitConfig"`
}

// EnvLayer is one layer of the environment.
type EnvLayer struct {
	Name string   `json:"name"`
	Vars []EnvVar `json:"vars"`
}

// EnvVar is one variable; <…> in Value is a run-time value.
type EnvVar struct {
	Name     string `json:"name"`
	Value    string `json:"value,omitempty"`
	CausedBy Causes `json:"causedBy,omitempty"`
}

// GitConfig is the git configuration injected with GIT_CONFIG_KEY_n,
// GIT_CONFIG_VALUE_n and GIT_CONFIG_COUNT.
type GitConfig struct {
	Numbering string        `json:"numbering"`
	Entries   []GitConfigKV `json:"entries"`
}

// GitConfigKV is one injected git configuration entry.
type GitConfigKV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Token is the restricted token the command runs under.
type Token struct {
	User           string   `json:"user"`
	RestrictingSID []string `json:"restrictingSids"`
	DenyOnlySIDs   []string `json:"denyOnlySids"`
	Privileges     string   `json:"privileges"`
	Integrity      string   `json:"integrity"`
	Effect         string   `json:"effect"`
}

// ExitCode is one exit status of the helper and its meaning.
type ExitCode struct {
	Code    int    `json:"code"`
	Meaning string `json:"meaning"`
}

// ResidualRisk is a known limitation of the sandbox.
type ResidualRisk struct {
	ID         string `json:"id"`
	Risk       string `json:"risk"`
	Mitigation string `json:"mitigation,omitempty"`
	CausedBy   Causes `json:"causedBy,omitempty"`
}
