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
// Paths follow POSIX rules, unless CompileFile is asked for the Windows
// rules (schema.OSWindows): then NormalizeWindows reads the Windows
// spellings of docs/reference.md#path-resolution (drive letters, backslashes, UNC,
// %USERPROFILE%, * and ? as the only wildcards), the POSIX default
// writable paths and mandatory denies are left out (the reference has none
// on Windows), and Policy.Windows holds the windows.* keys.
package compiler
