package policy

import (
	"fmt"
	"strings"
)

// The security vocabulary of a policy: each word the compiler writes and
// the emitters and the runtime read is a named type with its constants
// here. A plan is decoded through UnmarshalText, so a value this srt does
// not know is refused when the plan is read, not met at run time; every
// switch over one of these types names each constant
// (TestSwitchesNameEveryConstant).

// A SeccompRule names one rule set of the Linux seccomp program
// (Process.Seccomp).
type SeccompRule string

// The seccomp rule sets, in the order a program applies them.
const (
	// SeccompKeyring refuses the kernel's key retention service.
	SeccompKeyring SeccompRule = "keyring"
	// SeccompUnix refuses creating AF_UNIX and AF_VSOCK sockets, and
	// io_uring.
	SeccompUnix SeccompRule = "unix"
	// SeccompNamespaces refuses changing mounts or namespaces.
	SeccompNamespaces SeccompRule = "namespaces"
)

// SeccompRules returns every rule set, in the order a program applies them.
func SeccompRules() []SeccompRule {
	return []SeccompRule{SeccompKeyring, SeccompUnix, SeccompNamespaces}
}

// UnmarshalText accepts only the rule sets this srt knows: a program that
// silently left one out would enforce less than the plan says.
func (r *SeccompRule) UnmarshalText(b []byte) error {
	v := SeccompRule(b)
	switch v {
	case SeccompKeyring, SeccompUnix, SeccompNamespaces:
		*r = v
		return nil
	}
	return unknown("seccomp rule set", string(b), SeccompRules())
}

// A NoMatchAction is onExtractNoMatch: what happens when a masked
// credential's extract or decode finds no secret.
type NoMatchAction string

// The onExtractNoMatch values. "" (not set) means NoMatchWarn.
const (
	// NoMatchWarn leaves the value as it is, with a warning.
	NoMatchWarn NoMatchAction = "warn"
	// NoMatchDeny removes the variable, or hides the file.
	NoMatchDeny NoMatchAction = "deny"
	// NoMatchError stops the run before the command starts.
	NoMatchError NoMatchAction = "error"
)

// NoMatchActions returns every action.
func NoMatchActions() []NoMatchAction { return []NoMatchAction{NoMatchWarn, NoMatchDeny, NoMatchError} }

// Resolved is a, or NoMatchWarn when a is "" (not set).
func (a NoMatchAction) Resolved() NoMatchAction {
	if a == "" {
		return NoMatchWarn
	}
	return a
}

// UnmarshalText accepts "" and the actions this srt knows.
func (a *NoMatchAction) UnmarshalText(b []byte) error {
	v := NoMatchAction(b)
	switch v.Resolved() {
	case NoMatchWarn, NoMatchDeny, NoMatchError:
		*a = v
		return nil
	}
	return unknown("onExtractNoMatch value", string(b), NoMatchActions())
}

// A Decoder is decode: how a masked credential's secrets are shown.
type Decoder string

// The decoders.
const (
	// DecodeNone shows each secret (Extract's first group, or the whole
	// value) as a stand-in of its length.
	DecodeNone Decoder = ""
	// DecodeJWT shows each JSON Web Token as a fake token whose masked
	// claims are stand-ins.
	DecodeJWT Decoder = "jwt"
)

// Decoders returns every decoder.
func Decoders() []Decoder { return []Decoder{DecodeNone, DecodeJWT} }

// UnmarshalText accepts only the decoders this srt knows: an unknown one
// would show the command something other than what the plan says.
func (d *Decoder) UnmarshalText(b []byte) error {
	v := Decoder(b)
	switch v {
	case DecodeNone, DecodeJWT:
		*d = v
		return nil
	}
	return unknown("decoder", string(b), Decoders())
}

// A SigV4Mode is what the proxy does with one shape of SigV4 request it
// cannot re-sign (SigV4).
type SigV4Mode string

// The values of each SigV4 setting. "" (not set) means SigV4Deny.
const (
	// SigV4Deny refuses the request (403).
	SigV4Deny SigV4Mode = "deny"
	// SigV4Passthrough forwards it as the command signed it, with the
	// stand-in key id.
	SigV4Passthrough SigV4Mode = "passthrough"
)

// SigV4Modes returns every mode.
func SigV4Modes() []SigV4Mode { return []SigV4Mode{SigV4Deny, SigV4Passthrough} }

// Resolved is m, or SigV4Deny when m is "" (not set).
func (m SigV4Mode) Resolved() SigV4Mode {
	if m == "" {
		return SigV4Deny
	}
	return m
}

// Passthrough reports whether m forwards the request; an unknown mode
// (which UnmarshalText refuses) denies.
func (m SigV4Mode) Passthrough() bool {
	switch m.Resolved() {
	case SigV4Passthrough:
		return true
	case SigV4Deny:
		return false
	}
	return false
}

// UnmarshalText accepts "" and the modes this srt knows.
func (m *SigV4Mode) UnmarshalText(b []byte) error {
	v := SigV4Mode(b)
	switch v.Resolved() {
	case SigV4Deny, SigV4Passthrough:
		*m = v
		return nil
	}
	return unknown("sigv4 mode", string(b), SigV4Modes())
}

// unknown is the error for a value outside a vocabulary.
func unknown[T ~string](what, v string, known []T) error {
	names := make([]string, 0, len(known))
	for _, k := range known {
		if k != "" {
			names = append(names, string(k))
		}
	}
	return fmt.Errorf("policy: unknown %s %q (this srt knows %s)", what, v, strings.Join(names, ", "))
}
