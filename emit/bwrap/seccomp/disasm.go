package seccomp

import (
	"fmt"
	"strings"

	"golang.org/x/net/bpf"
)

// String renders p one instruction per line with a header, for review:
//
//	l05: jeq  #0x1a9, l15, l06        ; io_uring_setup
//
// Constants are named after what the accumulator holds: the architecture,
// the system call number, or the first argument of the system call the
// block belongs to (socket families, clone flags).
func (p Program) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# seccomp program %q for %s: %d instructions\n", p.Name, p.Arch, len(p.Insns))
	width := len(fmt.Sprint(len(p.Insns) - 1))
	label := func(pc int) string { return fmt.Sprintf("l%0*d", width, pc) }
	states := p.accumulatorStates()
	for pc, in := range p.Insns {
		acc, syscall := states[pc].acc, states[pc].syscall
		var text, note string
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			text = fmt.Sprintf("ld   [%d]", in.Off)
			note = map[uint32]string{offArch: "seccomp_data.arch", offNr: "seccomp_data.nr", offArg0Low: "seccomp_data.args[0], low 32 bits"}[in.Off]
			if in.Off == offArg0Low && syscall != "" {
				note = syscall + ": " + note
			}
		case bpf.JumpIf:
			op := map[bpf.JumpTest]string{
				bpf.JumpEqual: "jeq", bpf.JumpNotEqual: "jne", bpf.JumpGreaterOrEqual: "jge",
				bpf.JumpGreaterThan: "jgt", bpf.JumpBitsSet: "jset",
			}[in.Cond]
			if op == "" {
				op = fmt.Sprintf("j?%d", in.Cond)
			}
			text = fmt.Sprintf("%-4s #%#x, %s, %s", op, in.Val, label(pc+1+int(in.SkipTrue)), label(pc+1+int(in.SkipFalse)))
			note = p.constName(acc, syscall, in.Val)
		case bpf.RetConstant:
			text = fmt.Sprintf("ret  #%#x", in.Val)
			note = retName(in.Val)
		default:
			text = fmt.Sprint(in)
		}
		line := fmt.Sprintf("%s: %s", label(pc), text)
		if note != "" {
			line = fmt.Sprintf("%-40s ; %s", line, note)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// accState is what the accumulator holds before an instruction: "arch",
// "nr", "arg0" or "" (unknown), and for "arg0" the system call whose
// argument it is.
type accState struct{ acc, syscall string }

// accumulatorStates computes the state before each instruction by
// propagating along every (forward) edge; where paths disagree, the state is
// unknown.
func (p Program) accumulatorStates() []accState {
	states := make([]accState, len(p.Insns))
	seen := make([]bool, len(p.Insns))
	flow := func(pc int, s accState) {
		if pc >= len(p.Insns) {
			return
		}
		if seen[pc] && states[pc] != s {
			s = accState{}
		}
		states[pc], seen[pc] = s, true
	}
	seen[0] = true
	for pc, in := range p.Insns {
		s := states[pc]
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			next := accState{}
			switch in.Off {
			case offArch:
				next.acc = "arch"
			case offNr:
				next.acc = "nr"
			case offArg0Low:
				next = accState{"arg0", s.syscall}
			}
			flow(pc+1, next)
		case bpf.JumpIf:
			t, f := s, s
			if s.acc == "nr" && in.Cond == bpf.JumpEqual {
				t.syscall = p.Arch.syscallName(in.Val)
			}
			flow(pc+1+int(in.SkipTrue), t)
			flow(pc+1+int(in.SkipFalse), f)
		case bpf.RetConstant:
		default:
			flow(pc+1, accState{})
		}
	}
	return states
}

func (p Program) constName(acc, syscall string, v uint32) string {
	switch acc {
	case "arch":
		switch v {
		case auditArchX86_64:
			return "AUDIT_ARCH_X86_64"
		case auditArchAArch64:
			return "AUDIT_ARCH_AARCH64"
		}
	case "nr":
		switch {
		case v == x32SyscallBit && p.Arch == X86_64:
			return "__X32_SYSCALL_BIT: x32 ABI"
		case v == 0xffffffff:
			return "-1: no system call"
		}
		return p.Arch.syscallName(v)
	case "arg0":
		switch syscall {
		case "socket":
			return map[uint32]string{afUnix: "AF_UNIX", afVsock: "AF_VSOCK"}[v]
		case "clone", "unshare":
			return map[uint32]string{cloneNewUser: "CLONE_NEWUSER", cloneNewNS: "CLONE_NEWNS", cloneParentSetTID: "0x00100000 (CLONE_PARENT_SETTID's bit)"}[v]
		}
	}
	return ""
}

func retName(v uint32) string {
	switch {
	case v == RetAllow:
		return "SECCOMP_RET_ALLOW"
	case v == RetKillThread:
		return "SECCOMP_RET_KILL_THREAD"
	case v == RetKillProcess:
		return "SECCOMP_RET_KILL_PROCESS"
	case v&0xffff0000 == RetErrno:
		switch v & 0xffff {
		case EPERM:
			return "SECCOMP_RET_ERRNO | EPERM"
		case ENOSYS:
			return "SECCOMP_RET_ERRNO | ENOSYS"
		}
		return fmt.Sprintf("SECCOMP_RET_ERRNO | %d", v&0xffff)
	}
	return ""
}
