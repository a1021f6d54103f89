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

// # Adding a settings key
//
// A new key touches these places, in this order, and nothing else:
//
//  1. The grammar: schema/settings.cue (the type, its default, the message
//     for a bad value, and any cross-field rule in #Checks), the Go type in
//     schema/settings.go, and a valid and an invalid case in
//     schema/testdata. `srtc schema` and the JSON Schema follow by
//     themselves.
//  2. The IR: a field of policy.Policy (compiler/policy) that says what the
//     key means once the host-independent reading is applied, with the
//     Origin of the setting behind each rule. compile.go reads the key; a
//     switch is read through compiler.flag or compiler.set, which records
//     where it was set for the review tools (Policy.Switches). A case in
//     compile_test.go.
//  3. The emitters that care: emit/bwrap (a bubblewrap option, or a @step
//     the runtime resolves: then a resolver in runtime/resolve's directive
//     table, or srt refuses the plan), emit/seatbelt, emit/wfp. A golden
//     case in golden/testdata (go test ./golden/... -update, and read the
//     diff).
//  4. What the key changes at run time, if anything the emitted artifacts
//     cannot say (the proxies read policy.Network directly).
//
// The review tools (review/query, lint, policydiff) answer from the IR:
// they need a change only where the key adds a new kind of question.
