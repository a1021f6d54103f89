// Package compiler turns validated settings (package schema) into a
// policy.Policy: the platform-neutral rules the emitters render for each
// target and the runtime enforces.
//
// Compiling applies the meaning of the settings that does not depend on the
// host: paths are normalised to symbolic roots (${HOME}, ${CWD}), the
// default writable paths and the mandatory denies are added, credential
// files join the read denies, network entries are parsed once into
// matchers, and every rule keeps the Origin of the setting that produced it.
// What depends on the host (which paths exist, symlinks, glob expansion, the
// mandatory-deny scan below the working directory) is left to the runtime's
// resolve step.
//
// Paths follow POSIX rules; the Windows spellings of settings.md §6.4.2
// (%USERPROFILE%, backslashes, drive letters) are for the Windows emitter.
package compiler
