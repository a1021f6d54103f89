package seccomp

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/net/bpf"

	"srt.dev/compiler/policy"
)

// Return values of a seccomp filter (linux/seccomp.h).
const (
	RetKillThread  = 0x00000000
	RetKillProcess = 0x80000000
	RetErrno       = 0x00050000 // | errno
	RetAllow       = 0x7fff0000
)

// Errno values the programs return (asm-generic/errno-base.h, errno.h).
const (
	EPERM  = 1
	ENOSYS = 38
)

// Socket families and clone flags the programs test.
const (
	afUnix  = 1  // AF_UNIX
	afVsock = 40 // AF_VSOCK

	cloneNewNS        = 0x00020000 // CLONE_NEWNS
	cloneParentSetTID = 0x00100000 // tested on unshare by the reference's helper; see Namespaces
	cloneNewUser      = 0x10000000 // CLONE_NEWUSER
)

// Offsets in struct seccomp_data (linux/seccomp.h), little-endian.
const (
	offNr      = 0
	offArch    = 4
	offArg0Low = 16 // low 32 bits of args[0]
)

// A Program is one seccomp filter for one architecture.
type Program struct {
	Name  string // the rule sets, e.g. "keyring+unix+namespaces"
	Arch  Arch
	Insns []bpf.Instruction
}

// Unix returns the program that denies creating AF_UNIX and AF_VSOCK
// sockets (EPERM) and io_uring (EPERM: IORING_OP_SOCKET would create sockets
// without socket(2)). The family is compared on the low 32 bits of the
// register only: socket(AF_UNIX | 1<<32) is still AF_UNIX to the kernel,
// which truncates the argument to an int. socketpair(AF_UNIX) and inherited
// unix sockets stay usable, as in the reference.
func Unix(a Arch) Program { return Build(a, Rules{Unix: true}) }

// Namespaces returns the program that keeps the command from changing its
// mounts or namespaces: setns, mount, umount2, pivot_root, the new mount API
// (open_tree … open_tree_attr) fail with EPERM, and so do clone and unshare
// with CLONE_NEWUSER or CLONE_NEWNS in their flags (tested bit by bit, so
// other flags beside them change nothing; low 32 bits, as the kernel reads
// an int). clone3 fails with ENOSYS: its flags live in memory a filter
// cannot read, and ENOSYS makes libc and language runtimes fall back to
// clone. unshare is also refused with 0x00100000, which the reference's
// helper tests too (the kernel rejects that bit for unshare anyway).
func Namespaces(a Arch) Program { return Build(a, Rules{Namespaces: true}) }

// Keyring returns the program that keeps the command away from the kernel's
// key retention service: keyctl, add_key and request_key fail with EPERM.
// The sandbox shares the caller's session keyring (bubblewrap does not give
// it a new one, and keyrings are not a namespace), so without this rule the
// command could read the keys the caller holds (Kerberos tickets, ecryptfs
// keys) and plant keys of its own for the caller's later programs. Docker's
// and Flatpak's default profiles refuse the same three calls.
func Keyring(a Arch) Program { return Build(a, Rules{Keyring: true}) }

// Rules selects the rule sets of a program.
type Rules struct {
	Keyring    bool // the rules of Keyring
	Unix       bool // the rules of Unix
	Namespaces bool // the rules of Namespaces
}

// ParseRules reads a selection of rule sets (a policy's process.seccomp
// list). An unknown rule set is an error: a program that silently left a
// rule set out would enforce less than the plan says.
func ParseRules(names []policy.SeccompRule) (Rules, error) {
	var r Rules
	for _, n := range names {
		switch n {
		case policy.SeccompKeyring:
			r.Keyring = true
		case policy.SeccompUnix:
			r.Unix = true
		case policy.SeccompNamespaces:
			r.Namespaces = true
		default:
			known := make([]string, 0, 3)
			for _, k := range policy.SeccompRules() {
				known = append(known, string(k))
			}
			return Rules{}, fmt.Errorf("seccomp: unknown rule set %q (this srt knows %s)", n, strings.Join(known, ", "))
		}
	}
	return r, nil
}

// Name is the selected rule sets joined with "+" in the order of
// policy.SeccompRules, e.g. "keyring+unix+namespaces", or "".
func (r Rules) Name() string {
	var names []string
	for _, n := range policy.SeccompRules() {
		if r.has(n) {
			names = append(names, string(n))
		}
	}
	return strings.Join(names, "+")
}

// has reports whether r selects the rule set n.
func (r Rules) has(n policy.SeccompRule) bool {
	switch n {
	case policy.SeccompKeyring:
		return r.Keyring
	case policy.SeccompUnix:
		return r.Unix
	case policy.SeccompNamespaces:
		return r.Namespaces
	}
	return false
}

// Build returns one program with the selected rule sets, so that the
// sandbox needs a single filter. Rules{} gives a program that only checks
// the architecture; callers install none instead.
func Build(a Arch, r Rules) Program {
	b := newBuilder()
	prologue(b, a)
	if r.Keyring {
		for _, name := range []string{"add_key", "request_key", "keyctl"} {
			b.jumpIf(bpf.JumpEqual, a.Syscall(name), "eperm", "")
		}
	}
	if r.Unix {
		next := "allow"
		if r.Namespaces {
			next = "namespaces"
		}
		for _, name := range []string{"io_uring_setup", "io_uring_enter", "io_uring_register"} {
			b.jumpIf(bpf.JumpEqual, a.Syscall(name), "eperm", "")
		}
		b.jumpIf(bpf.JumpEqual, a.Syscall("socket"), "", next)
		b.add(bpf.LoadAbsolute{Off: offArg0Low, Size: 4})
		b.jumpIf(bpf.JumpEqual, afUnix, "eperm", "")
		b.jumpIf(bpf.JumpEqual, afVsock, "eperm", "allow")
	}
	if r.Namespaces {
		b.label("namespaces")
		for _, name := range []string{
			"pivot_root", "mount", "umount2", "setns",
			"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
			"mount_setattr", "open_tree_attr",
		} {
			b.jumpIf(bpf.JumpEqual, a.Syscall(name), "eperm", "")
		}
		b.jumpIf(bpf.JumpEqual, a.Syscall("clone3"), "enosys", "")
		b.jumpIf(bpf.JumpEqual, a.Syscall("clone"), "", "not-clone")
		b.add(bpf.LoadAbsolute{Off: offArg0Low, Size: 4})
		b.jumpIf(bpf.JumpBitsSet, cloneNewUser, "eperm", "")
		b.jumpIf(bpf.JumpBitsSet, cloneNewNS, "eperm", "allow")
		b.label("not-clone")
		b.jumpIf(bpf.JumpEqual, a.Syscall("unshare"), "", "allow")
		b.add(bpf.LoadAbsolute{Off: offArg0Low, Size: 4})
		b.jumpIf(bpf.JumpBitsSet, cloneNewUser, "eperm", "")
		b.jumpIf(bpf.JumpBitsSet, cloneParentSetTID, "eperm", "")
		b.jumpIf(bpf.JumpBitsSet, cloneNewNS, "eperm", "allow")
	}
	return epilogue(b, a, r.Name(), r.Namespaces)
}

// prologue checks the architecture and loads the system call number. On
// x86_64 it also refuses the x32 ABI, whose numbers carry bit 30; -1 (no
// system call, as ptrace uses it) passes.
func prologue(b *builder, a Arch) {
	b.add(bpf.LoadAbsolute{Off: offArch, Size: 4})
	b.jumpIf(bpf.JumpEqual, a.AuditArch(), "", "kill")
	b.add(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if a == X86_64 {
		b.jumpIf(bpf.JumpGreaterOrEqual, x32SyscallBit, "", "syscalls")
		b.jumpIf(bpf.JumpEqual, 0xffffffff, "syscalls", "kill")
		b.label("syscalls")
	}
}

// epilogue places the shared returns.
func epilogue(b *builder, a Arch, name string, enosys bool) Program {
	b.label("allow")
	b.add(bpf.RetConstant{Val: RetAllow})
	if name != "" {
		b.label("eperm")
		b.add(bpf.RetConstant{Val: RetErrno | EPERM})
	}
	if enosys {
		b.label("enosys")
		b.add(bpf.RetConstant{Val: RetErrno | ENOSYS})
	}
	b.label("kill")
	b.add(bpf.RetConstant{Val: RetKillThread})
	insns, err := b.program()
	if err != nil {
		panic(fmt.Sprintf("seccomp: building %s for %s: %v", name, a, err))
	}
	return Program{Name: name, Arch: a, Insns: insns}
}

// Marshal returns the program as the raw struct sock_filter array that
// bubblewrap's --seccomp FD and the kernel read: 8 bytes per instruction,
// little-endian (both supported architectures are).
func (p Program) Marshal() ([]byte, error) {
	raw, err := bpf.Assemble(p.Insns)
	if err != nil {
		return nil, fmt.Errorf("seccomp: assembling %s for %s: %w", p.Name, p.Arch, err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.LittleEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.LittleEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// Parse reads a raw struct sock_filter array back into a program.
func Parse(a Arch, name string, raw []byte) (Program, error) {
	if len(raw)%8 != 0 {
		return Program{}, fmt.Errorf("seccomp: %d bytes is not a whole number of 8-byte instructions", len(raw))
	}
	p := Program{Name: name, Arch: a}
	for i := 0; i < len(raw); i += 8 {
		r := bpf.RawInstruction{
			Op: binary.LittleEndian.Uint16(raw[i:]),
			Jt: raw[i+2],
			Jf: raw[i+3],
			K:  binary.LittleEndian.Uint32(raw[i+4:]),
		}
		p.Insns = append(p.Insns, canonical(r.Disassemble()))
	}
	return p, nil
}

// canonical rewrites the negated jumps x/net/bpf disassembles into (jne,
// jlt, jle, "bits not set") as the positive test with swapped targets,
// which is how this package writes every jump.
func canonical(in bpf.Instruction) bpf.Instruction {
	j, ok := in.(bpf.JumpIf)
	if !ok {
		return in
	}
	swap := map[bpf.JumpTest]bpf.JumpTest{
		bpf.JumpNotEqual:    bpf.JumpEqual,
		bpf.JumpLessThan:    bpf.JumpGreaterOrEqual,
		bpf.JumpLessOrEqual: bpf.JumpGreaterThan,
		bpf.JumpBitsNotSet:  bpf.JumpBitsSet,
	}
	if pos, ok := swap[j.Cond]; ok {
		j.Cond, j.SkipTrue, j.SkipFalse = pos, j.SkipFalse, j.SkipTrue
	}
	return j
}
