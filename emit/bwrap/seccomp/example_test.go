package seccomp_test

import (
	"fmt"

	"srt.dev/emit/bwrap/seccomp"
)

// The disassembly is what a reviewer reads in linux/seccomp.<arch>.txt.
func ExampleProgram_String() {
	fmt.Print(seccomp.Unix(seccomp.X86_64))
	// Output:
	// # seccomp program "unix" for x86_64: 15 instructions
	// l00: ld   [4]                            ; seccomp_data.arch
	// l01: jeq  #0xc000003e, l02, l14          ; AUDIT_ARCH_X86_64
	// l02: ld   [0]                            ; seccomp_data.nr
	// l03: jge  #0x40000000, l04, l05          ; __X32_SYSCALL_BIT: x32 ABI
	// l04: jeq  #0xffffffff, l05, l14          ; -1: no system call
	// l05: jeq  #0x1a9, l13, l06               ; io_uring_setup
	// l06: jeq  #0x1aa, l13, l07               ; io_uring_enter
	// l07: jeq  #0x1ab, l13, l08               ; io_uring_register
	// l08: jeq  #0x29, l09, l12                ; socket
	// l09: ld   [16]                           ; socket: seccomp_data.args[0], low 32 bits
	// l10: jeq  #0x1, l13, l11                 ; AF_UNIX
	// l11: jeq  #0x28, l13, l12                ; AF_VSOCK
	// l12: ret  #0x7fff0000                    ; SECCOMP_RET_ALLOW
	// l13: ret  #0x50001                       ; SECCOMP_RET_ERRNO | EPERM
	// l14: ret  #0x0                           ; SECCOMP_RET_KILL_THREAD
}
