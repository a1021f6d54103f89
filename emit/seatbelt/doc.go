// Package seatbelt emits the macOS artifact of a policy: a Seatbelt (.sb)
// profile for sandbox-exec, laid out as docs/reference.md#macos-profile-layout records the
// reference's (default deny, the fixed base allowances, the network, file
// reads deny-then-allow, file writes allow-only, the mandatory denies, the
// trailing unlink rule, the optional blocks).
//
// The emitter builds a Program (Compile): the profile's rules in order,
// each a typed value (action, operations, filters) whose filters carry
// the settings entry or built-in rule that made them. Emit renders it;
// Decide evaluates it with Seatbelt's semantics (last matching rule wins),
// with the parameters Program.Defines gives for a host; a Decider answers
// many questions from the program's filters indexed by path. review/query
// answers macOS questions by evaluating that program, so it reads what is
// emitted, not a second model of it.
//
// Host facts are sandbox-exec parameters ((param "HOME"), string-append),
// passed with -D at run time (see Host), so the same settings give the same
// bytes on every machine. Emit is pure: no file system, no environment.
//
// The rule of thumb for every allow rule (a read allow, a write root, the
// re-allow of unlinking in write roots, a carve-out of a deny): derive it
// so that it can never match a path the same entry would not grant on
// Linux. A reading that only widens ("also the literal name", "also
// without the trailing separator", "also the unfolded spelling", "assume
// this root lies inside that one") is right for a deny, which may only
// grow, and wrong for an allow. Where the answer depends on the host
// (where HOME and the working directory are, CARVE_n; whether a path
// exists when srt starts, which decides the /private and folded spellings
// of an allow, PRIVATE_n), the profile does not guess: it asks the runtime
// through a parameter (HostDefines), and without one it keeps the deny
// whole. The allows here are narrower still than Linux
// where the reference's are: a glob ending in a separator matches nothing,
// as the reference's does.
//
// Nothing in this package has been run on a real Mac. The tests prove that
// every profile is well formed S-expressions using only known operations
// and filters, that its text reads back as its program, and pin the rules
// of the spec's cases; whether sandbox-exec
// accepts the parameter expressions and enforces the rules as intended has
// not been observed.
package seatbelt
