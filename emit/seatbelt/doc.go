// Package seatbelt emits the macOS artifact of a policy: a Seatbelt (.sb)
// profile for sandbox-exec, laid out as docs/reference.md#macos-profile-layout records the
// reference's (default deny, the fixed base allowances, the network, file
// reads deny-then-allow, file writes allow-only, the mandatory denies, the
// trailing unlink rule, the optional blocks).
//
// Host facts are sandbox-exec parameters ((param "HOME"), string-append),
// passed with -D at run time (see Host), so the same settings give the same
// bytes on every machine. Emit is pure: no file system, no environment.
//
// Nothing in this package has been run on a real Mac. The tests prove that
// every profile is well formed S-expressions using only known operations
// and filters, and pin the rules of the spec's cases; whether sandbox-exec
// accepts the parameter expressions and enforces the rules as intended has
// not been observed.
package seatbelt
