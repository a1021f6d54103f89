// Package runtime is the only part of srt that touches the host. Its
// packages:
//
//   - resolve turns a compiled plan into the exact bubblewrap arguments for
//     this host: write roots, read and write denies where the paths really
//     are, ancestor pins, globs expanded now, the mandatory-deny scan;
//   - placeholders records the mount points made for absent protected
//     names and removes them once no run relies on them, also after srt was
//     killed;
//   - proxy serves the HTTP and SOCKS5 proxies on the decision of
//     compiler/policy/netpolicy (whether a connection may go out, and which of the
//     addresses an allowed name resolves to may be dialled);
//   - secrets finds what of a masked credential is secret; credentials
//     prepares a run's TLS termination (its CA and trust bundle), its
//     masked variables and files, and its AWS keys, for the proxies;
//   - violations keeps the refusals and writes the audit log;
//   - sandbox runs commands: the Manager, bubblewrap and the init step on
//     Linux, sandbox-exec on macOS (never run on a real Mac), doctor.
//
// On Windows nothing runs commands yet: the plan is emitted for review only.
package runtime
