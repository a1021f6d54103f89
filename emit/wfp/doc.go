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
// The session's set-ace operations are rendered from a typed
// access-control program (ACL, acl.go): each entry with its place, mask,
// trustee and the settings entries that made it. NewACL builds it from a
// policy of either reading, and Bound.Access (access.go) evaluates it the
// way Windows does: names compare ignoring case, only * and ? make a
// pattern and each match carries its own entry, the nearest entry
// decides (denies first on one object), a read deny also denies writes,
// the helper ranks the grants again on the host's paths, and a write bit
// needs the write-restricted token's restricting SIDs too. review/query
// answers for Windows through it, so srtc explain, lint, diff and test
// answer from what the plan writes. access_test.go checks it against
// answers written from the spec.
package wfp
