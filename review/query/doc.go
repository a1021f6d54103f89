// Package query answers questions about a compiled policy without running
// anything: may the command read or write this path, connect to this host,
// use this unix socket, on each target platform, and which rule decided.
//
// It is the one static evaluator behind srtc explain, lint, diff and test,
// so that they cannot disagree with each other. It works on the policy IR
// (compiler/policy) and the platform semantics the reference documents
// (docs/reference.md#linux, #macos, #windows, #fs-precedence), and, for
// Windows and macOS unix sockets, on the emitted programs:
//
//   - Linux: everything is readable (--ro-bind / /) except what denyRead
//     hides; an allowRead or allowWrite at or inside a deny restores it;
//     writes only in allowWrite roots, never where a denyWrite (even at or
//     above the root), a read deny's tmpfs, a credential mask or a
//     mandatory deny is; unix sockets cannot be filtered by path (seccomp
//     refuses socket(AF_UNIX) unless allowAllUnixSockets); globs are
//     expanded when srt starts, so files created later are not covered.
//   - macOS: the Seatbelt profile's rule order (docs/reference.md#macos-reads): reads are
//     deny-then-allow (allowRead reopens; a literal deny inside a literal
//     allow, every pattern deny except where an allow from the same root
//     is carved out, and every credential deny are repeated after the
//     allows and stay; "/" itself stays readable); allowWrite does not
//     reopen reads; a pattern allow opens its exact matches only, not
//     their contents; /tmp, /var and /etc are compared as /private/...,
//     ".." in a rule is folded, and an allow that Seatbelt sees only so
//     holds only where its path exists when srt starts (Options.Exists;
//     without it, assumed and said); write denies and the mandatory names apply
//     at any depth below the working directory (a deeper .vscode, .idea,
//     .git/hooks or .claude/commands directory is protected inside, not
//     itself); allowUnixSockets are allowed by subpath.
//   - Windows: the answers evaluate the access-control program of
//     windows/plan.json itself (emit/wfp: NewACL, Bound.Access), built
//     from the policy of either reading; the verdict is the program's,
//     and windows.go only names the settings entry behind it. Without
//     write roots (filesystem.disabled) nothing is writable under the
//     write-restricted token; AF_UNIX sockets are not filtered (the
//     socket file's ACL decides).
//
// Each target's semantics is in a file of its own, an implementation of
// the unexported platform interface (platform.go) that Read, Write,
// Remove, UnixSocket and Summary dispatch through: linux.go, macos.go
// (with remove.go, the macOS unlink rules, and macprog.go, the answers
// read from the emitted program) and windows.go. What the
// targets share stays shared: the credential masks and a disabled file
// system come first for every target (fs.go), write denies and the
// wording of a write root's answer, the walk down to the mandatory names
// (each platform says at which depths it protects them), the summary's
// loop (summary.go), and, for Linux, the model in which a read deny
// hides one unit that a grant strictly inside it restores (platform.go,
// layered). Adding a target means adding its file, and
// naming it in Targets and in on.
//
// Paths are compared as written: the evaluator does not follow symlinks
// or fold "..", which only the host can do (the resolve step binds a write
// root that is a symlink leading elsewhere as nothing, and hides a read
// deny where it really is). Answers are for the names the rules use.
// macOS is the exception above: its profile spells those two foldings
// itself, so its answers follow them.
//
// The macOS unix socket answers evaluate the Seatbelt program the profile
// is rendered from (emit/seatbelt Compile and Decide, macprog.go), on the
// host the options describe. The macOS read, write and remove answers
// still follow macos.go and remove.go, a reading of the same semantics,
// which emit/seatbelt/agree_test.go compares with that program's verdicts.
// The Windows answers are the plan's program evaluated, held to answers
// written from the spec (emit/wfp/access_test.go, query_test.go,
// divergence_test.go). The Linux answers are checked against real
// bubblewrap in a test. None is a measurement on a real Mac or Windows
// machine.
//
// Network answers use policy.HostList through compiler/policy/netpolicy.Decide,
// the decision function the proxies use; there is no second matcher.
package query
