// Package runtime is the only part of srt that touches the host. Its
// packages, in the order a run uses them (docs/pipeline.md follows a
// settings file through them):
//
//   - trust records which compiled plans (srtc compile's directories) the
//     user trusts on this machine: srt run --plan runs no other;
//   - private makes and checks the directories that belong to this user
//     alone: the cache of compiled policies, the trust record, the
//     placeholder records;
//   - resolve turns the symbolic bubblewrap plan (emit/bwrap) into the
//     exact bubblewrap arguments for this host: write roots, read and
//     write denies where the paths really are, ancestor pins, globs
//     expanded now, the mandatory-deny scan, the second layer's paths;
//   - gitconfig reads git configuration as git does: the files git reads
//     outside any repository (which resolve protects), core.hooksPath, and
//     after a run whether a configuration the command wrote runs anything;
//   - nofollow opens host paths without following a symbolic link on the
//     way, for every tree a sandboxed command could write; realpath is the
//     one reading of where a host path leads through its links, shared by
//     what is protected before a run and what is checked after it;
//   - placeholders records the mount points made for absent protected
//     names and removes them once no run relies on them, also after srt was
//     killed;
//   - secrets finds what of a masked credential is secret and makes its
//     stand-in; credentials prepares a run's TLS termination (its CA and
//     trust bundle), its masked variables and files, and its AWS keys, for
//     the proxies;
//   - proxy serves the HTTP and SOCKS5 proxies on the decision of
//     compiler/policy/netpolicy (whether a connection may go out, and which
//     of the addresses an allowed name resolves to may be dialled), with
//     TLS termination and credential injection; proxy/decider is the
//     protocol between srt proxy and an external decider;
//   - sandbox runs commands: the Manager and one run's steps (run.go),
//     bubblewrap on Linux, sandbox-exec on macOS (never run on a real Mac),
//     sandboxes prepared before their command (Prepare), the write watch,
//     srt doctor;
//   - initstep is the first process inside a Linux sandbox (the program
//     srt-init, or srt in its place): it opens the proxies' listeners and
//     the terminal there and hands them over, applies the second layer
//     (Landlock) and the rlimits, starts the command, forwards signals;
//   - violations keeps the refusals and writes the audit log;
//   - quarantine notes the write roots before the command and, after it,
//     moves the protected names it created or changed there out of the
//     user's tree.
//
// On Windows nothing runs commands yet: the plan is emitted for review only.
package runtime
