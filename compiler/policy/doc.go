// Package policy holds the platform-neutral policy types that the compiler
// produces and the emitters and the runtime consume. It is small and stable
// on purpose: emitters import it, never the settings schema.
//
// So far it holds the network host rules: allow and deny entries parsed once
// into a matcher (spec network.md §1), shared by the compiler and by the
// runtime's proxies.
package policy
