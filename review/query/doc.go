// Package query answers questions about a compiled policy without running
// anything: may the command read or write this path, connect to this host,
// use this unix socket, on each target platform, and which rule decided.
//
// It is the one static evaluator behind srtc explain, lint, diff and test,
// so that they cannot disagree with each other. It works on the policy IR
// (compiler/policy) and the platform semantics the reference documents
// (docs/reference.md#linux, #macos, #windows, #fs-precedence), and, for
// macOS and Windows, on the emitted programs:
//
//   - Linux: everything is readable (--ro-bind / /) except what denyRead
//     hides; an allowRead or allowWrite at or inside a deny restores it;
//     writes only in allowWrite roots, never where a denyWrite (even at or
//     above the root), a read deny's tmpfs, a credential mask or a
//     mandatory deny is; unix sockets cannot be filtered by path (seccomp
//     refuses socket(AF_UNIX) unless allowAllUnixSockets); globs are
//     expanded when srt starts, so files created later are not covered.
//   - macOS: the answers evaluate the Seatbelt program the profile is
//     rendered from (emit/seatbelt: Compile, Program.Decide), on the host
//     the options describe (Program.Defines; HOME and the working
//     directory at stand-ins where the options do not name them, and
//     whether each of the program's probes exists from Options.Exists,
//     assumed and said without it): a read is file-read-data, a write
//     file-write-data, a removal file-write-unlink, a unix socket
//     network-outbound. The verdict is the program's; macfiles.go and
//     macprog.go name the settings entry the deciding rule's matching
//     filter was made from and word the answer by the rule's step.
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
// (with macfiles.go and macprog.go, the answers read from the emitted
// program) and windows.go. What the
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
// macOS is the exception above: its profile spells the /private and
// folded forms itself, and a question is asked of the path as the kernel
// hands it to Seatbelt (/tmp, /var and /etc as /private/..., ".."
// folded).
//
// The macOS answers are the Seatbelt program's verdicts, held to answers
// written from the spec (divergence_test.go, query_test.go,
// emit/seatbelt/private_test.go). The Windows answers are the plan's
// program evaluated, held to answers written from the spec
// (emit/wfp/access_test.go, query_test.go, divergence_test.go). The Linux answers are checked against real
// bubblewrap in a test. None is a measurement on a real Mac or Windows
// machine.
//
// Network answers use policy.HostList through compiler/policy/netpolicy.Decide,
// the decision function the proxies use; there is no second matcher.
package query
