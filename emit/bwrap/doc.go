// Package bwrap emits the Linux artifacts of a policy: the bubblewrap plan
// (linux/bwrap.args) and the seccomp programs (package seccomp). It is a
// pure function of the policy: no file system, environment or clock.
//
// The plan is symbolic and portable. Each line is either bubblewrap
// arguments (an option and its operands), or a step the runtime resolves
// against the host, written "@name operand": which paths exist, whether they
// are files or directories, where symlinks lead, what a glob matches now,
// and what the mandatory-deny scan finds decide the exact mounts, in the
// order the lines give (docs/reference.md#bwrap-order). Package runtime/resolve does
// that for one host.
package bwrap
