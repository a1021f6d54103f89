// Package seccomp generates the seccomp BPF programs srt installs in the
// Linux sandbox, for x86_64 and aarch64, without libseccomp or cgo: the
// programs are built with golang.org/x/net/bpf, written as the raw
// struct sock_filter array bubblewrap reads from --seccomp FD, and rendered
// as a disassembly for review.
//
// Two programs, as in the reference runtime (docs/reference.md#seccomp):
//
//   - Unix: socket(AF_UNIX) and socket(AF_VSOCK), compared on the low 32
//     bits of the argument only, and io_uring_setup/enter/register fail
//     with EPERM. Left out under network.allowAllUnixSockets.
//   - Namespaces: setns, mount, umount2, pivot_root and the new mount API
//     fail with EPERM, as do clone and unshare with CLONE_NEWUSER or
//     CLONE_NEWNS; clone3 fails with ENOSYS so that libc falls back to clone,
//     whose flags can be inspected. Left out under allowNestedUserNamespaces.
//
// Both check the architecture first: a system call made through another
// ABI (i386 via int 0x80, or x32 on x86_64) would be numbered differently
// and escape the filter, so it kills the thread, as the reference does.
// Every jump is forward and every path ends in a return.
package seccomp
