// Package wfp emits the Windows artifact of a policy, windows/plan.json: a
// declarative plan of what the reference's Windows sandbox
// (docs/reference.md#windows-sandbox) does for one settings file, in six phases (install,
// installUser, sessionStart, perCommand, sessionReset, uninstall): the
// sandbox account and group, the WFP sublayer and filters, the ACL entries
// with their masks, the write-restricted token, the helper's argv and the
// command's environment, and the residual risks.
//
// The plan is for review: nothing in this project executes it yet, and it
// was not run on a Windows machine. It is a pure function of the policy
// (Emit, Render): no file system, no environment, no clock; host facts
// stay symbolic (%USERPROFILE%, %CD%, sid:user, <proxy port>), so the same
// settings give the same bytes everywhere.
//
// The policy must come from the Windows reading of the settings
// (compiler.CompileFile with schema.OSWindows): its paths use "/" and
// symbolic roots, which the plan renders in Windows spelling. Entries are
// ranked on their spellings, ignoring case, as far as spellings tell; what
// depends on the disk (globs, absent paths, junctions) becomes a condition
// of the operation, evaluated at session start.
//
// The tests hold an independent model of what the plan makes Windows
// enforce (interp_test.go: DACL evaluation of the set-ace operations under
// the write-restricted token, the WFP filters), and compare its answers
// with review/query's over the golden corpus and generated settings
// (agree_test.go).
package wfp
