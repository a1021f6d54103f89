// Package bwrap emits the Linux artifacts of a policy: the ordered
// bubblewrap mount plan, its rendering as bwrap arguments, and the seccomp
// BPF programs for each architecture with their disassembly. It is a pure
// function of the policy: no file system, environment or clock.
//
// Not built yet: see the issue "Compiler, policy IR and Linux artifacts".
package bwrap
