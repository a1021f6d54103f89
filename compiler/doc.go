// Package compiler turns validated settings (package schema) into the
// platform-neutral policy IR the emitters consume: paths normalised to
// symbolic roots (${HOME}, ${CWD}, ${TMPDIR}), read and write precedence
// applied, mandatory denies added, domain patterns parsed once, and every
// rule carrying the provenance of the settings entry that produced it.
//
// Not built yet: see the issue "Compiler, policy IR and Linux artifacts".
package compiler
