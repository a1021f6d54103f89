package seccomp

import "fmt"

// Arch is a Linux architecture the programs are generated for.
type Arch string

// The supported architectures.
const (
	X86_64  Arch = "x86_64"
	AArch64 Arch = "aarch64"
)

// Arches lists the supported architectures in a fixed order.
var Arches = []Arch{X86_64, AArch64}

// AuditArch values (linux/audit.h) that seccomp_data.arch holds.
const (
	auditArchX86_64  = 0xc000003e
	auditArchAArch64 = 0xc00000b7
	auditArchI386    = 0x40000003
	auditArchARM     = 0x40000028
)

// x32SyscallBit marks x32 ABI system calls on x86_64
// (arch/x86/include/uapi/asm/unistd.h, __X32_SYSCALL_BIT).
const x32SyscallBit = 0x40000000

// AuditArch is a's AUDIT_ARCH_* value.
func (a Arch) AuditArch() uint32 {
	switch a {
	case X86_64:
		return auditArchX86_64
	case AArch64:
		return auditArchAArch64
	}
	panic(fmt.Sprintf("seccomp: unknown arch %q", string(a)))
}

// syscalls maps the system calls the programs name to their numbers
// (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h
// for aarch64).
var syscalls = map[Arch]map[string]uint32{
	X86_64: {
		"socket": 41, "clone": 56, "pivot_root": 155, "mount": 165, "umount2": 166,
		"add_key": 248, "request_key": 249, "keyctl": 250,
		"unshare": 272, "setns": 308,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
		"clone3": 435, "mount_setattr": 442, "open_tree_attr": 467,
	},
	AArch64: {
		"umount2": 39, "mount": 40, "pivot_root": 41, "unshare": 97, "socket": 198,
		"add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220,
		"setns":          268,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
		"clone3": 435, "mount_setattr": 442, "open_tree_attr": 467,
	},
}

// Syscall returns the number of the named system call on a; it panics for a
// name this package does not know, which is a bug in the caller.
func (a Arch) Syscall(name string) uint32 {
	nr, ok := syscalls[a][name]
	if !ok {
		panic(fmt.Sprintf("seccomp: no number for %s on %s", name, a))
	}
	return nr
}

// syscallName returns the name of nr on a, or "".
func (a Arch) syscallName(nr uint32) string {
	for name, n := range syscalls[a] {
		if n == nr {
			return name
		}
	}
	return ""
}

// ForGOARCH returns the architecture of a Go GOARCH value ("amd64",
// "arm64"), or false when no program is generated for it.
func ForGOARCH(goarch string) (Arch, bool) {
	switch goarch {
	case "amd64":
		return X86_64, true
	case "arm64":
		return AArch64, true
	}
	return "", false
}
