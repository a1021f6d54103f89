// Package seatbelt emits the macOS artifact of a policy: a Seatbelt (.sb)
// profile with paths expressed as sandbox-exec parameters, so the same
// settings give the same bytes on every machine.
//
// Not built yet: see the issue "macOS: Seatbelt profile emitter".
package seatbelt
