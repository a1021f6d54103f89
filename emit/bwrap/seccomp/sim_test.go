package seccomp

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"srt.dev/compiler/policy"
)

// seccompData encodes struct seccomp_data for x/net/bpf's VM, which loads
// words big-endian: each 32-bit field is written big-endian at the offset
// the kernel's little-endian layout gives it, so the VM reads the value the
// kernel would. args[0] is split into its low word (offset 16) and high
// word (offset 20).
func seccompData(arch, nr uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	binary.BigEndian.PutUint32(b[16:], uint32(arg0))
	binary.BigEndian.PutUint32(b[20:], uint32(arg0>>32))
	return b
}

// model is what each program must answer, written from the spec
// (docs/reference.md#seccomp) independently of the programs' construction.
func model(prog string, a Arch, arch, nr uint32, arg0 uint64) uint32 {
	if arch != a.AuditArch() {
		return RetKillThread
	}
	if a == X86_64 && nr >= 0x40000000 && nr != 0xffffffff {
		return RetKillThread
	}
	is := func(names ...string) bool {
		for _, n := range names {
			if a.Syscall(n) == nr {
				return true
			}
		}
		return false
	}
	low := uint32(arg0) // the kernel reads these arguments as int
	if strings.Contains(prog, "keyring") {
		// add_key, request_key, keyctl: numbers from the kernel's tables,
		// written here rather than read from the package's own map.
		keyring := map[Arch][3]uint32{X86_64: {248, 249, 250}, AArch64: {217, 218, 219}}[a]
		if nr == keyring[0] || nr == keyring[1] || nr == keyring[2] {
			return RetErrno | EPERM
		}
	}
	if strings.Contains(prog, "unix") {
		if is("io_uring_setup", "io_uring_enter", "io_uring_register") {
			return RetErrno | EPERM
		}
		if is("socket") && (low == 1 || low == 40) {
			return RetErrno | EPERM
		}
	}
	if strings.Contains(prog, "namespaces") {
		if is("setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr") {
			return RetErrno | EPERM
		}
		if is("clone3") {
			return RetErrno | ENOSYS
		}
		if is("clone") && low&(0x10000000|0x20000) != 0 {
			return RetErrno | EPERM
		}
		if is("unshare") && low&(0x10000000|0x20000|0x100000) != 0 {
			return RetErrno | EPERM
		}
	}
	return RetAllow
}

var arg0s = []uint64{
	0, 1, 2, 10, 16, 40, 41, 0xffffffff, 1 << 32, 1<<32 | 1, 0xffffffff00000001, 40 | 1<<63,
	0x10000000, 0x20000, 0x100000, 0x10000000 | 0x11, 0x20000 | 0x40000000, 0x40000000, 0x11,
	0x10000000 << 32, 0x20000 << 32, // flags in the high word only: not flags to the kernel
}

// TestSimulate runs every program in x/net/bpf's VM over every system call
// number up to 1024, the x32 range, -1 and foreign architectures, with
// arguments on both sides of every test, and compares with the model.
func TestSimulate(t *testing.T) {
	var nrs []uint32
	for nr := uint32(0); nr < 1024; nr++ {
		nrs = append(nrs, nr)
	}
	nrs = append(nrs, 0x40000000, 0x40000000+41, 0x40000000+425, 0x40000000+272, 0x7fffffff, 0xfffffffe, 0xffffffff)
	arches := []uint32{auditArchX86_64, auditArchAArch64, auditArchI386, auditArchARM, 0}
	for _, a := range Arches {
		for _, p := range []Program{
			Keyring(a), Unix(a), Namespaces(a),
			Build(a, Rules{Unix: true, Namespaces: true}),
			Build(a, Rules{Keyring: true, Namespaces: true}),
			Build(a, Rules{Keyring: true, Unix: true, Namespaces: true}),
			Build(a, Rules{}),
		} {
			vm, err := bpf.NewVM(p.Insns)
			if err != nil {
				t.Fatalf("%s/%s: %v", p.Name, a, err)
			}
			runs := 0
			for _, arch := range arches {
				for _, nr := range nrs {
					for _, arg0 := range arg0s {
						got, err := vm.Run(seccompData(arch, nr, arg0))
						runs++
						if err != nil {
							t.Fatalf("%s/%s: run: %v", p.Name, a, err)
						}
						if want := model(p.Name, a, arch, nr, arg0); uint32(got) != want {
							t.Fatalf("%s/%s: arch %#x nr %d (%s) arg0 %#x = %#x, want %#x\n%s",
								p.Name, a, arch, nr, a.syscallName(nr), arg0, uint32(got), want, p)
						}
					}
				}
			}
			t.Logf("%s/%s: %d inputs agree with the model", p.Name, a, runs)
		}
	}
}

// TestNamedCases pins the cases the issue and the spec single out.
func TestNamedCases(t *testing.T) {
	x, arm := X86_64, AArch64
	tests := []struct {
		p    Program
		arch uint32
		nr   uint32
		arg0 uint64
		want uint32
	}{
		{Unix(x), auditArchX86_64, 41, 1, RetErrno | EPERM},                 // socket(AF_UNIX)
		{Unix(x), auditArchX86_64, 41, 1 | 1<<32, RetErrno | EPERM},         // socket(AF_UNIX | 1<<32)
		{Unix(x), auditArchX86_64, 41, 40, RetErrno | EPERM},                // socket(AF_VSOCK)
		{Unix(x), auditArchX86_64, 41, 2, RetAllow},                         // socket(AF_INET)
		{Unix(x), auditArchX86_64, 53, 1, RetAllow},                         // socketpair(AF_UNIX)
		{Unix(x), auditArchX86_64, 0x40000000 + 41, 1, RetKillThread},       // x32 socket
		{Unix(x), auditArchI386, 359, 1, RetKillThread},                     // i386 socket via int 0x80
		{Unix(x), auditArchX86_64, 0xffffffff, 0, RetAllow},                 // -1
		{Unix(arm), auditArchAArch64, 198, 1, RetErrno | EPERM},             // socket(AF_UNIX)
		{Unix(arm), auditArchAArch64, 0x40000000 + 198, 1, RetAllow},        // no x32 on aarch64
		{Unix(arm), auditArchARM, 281, 1, RetKillThread},                    // arm32 compat
		{Namespaces(x), auditArchX86_64, 272, 0x10000000, RetErrno | EPERM}, // unshare(CLONE_NEWUSER)
		{Namespaces(x), auditArchX86_64, 272, 0x40000000, RetAllow},         // unshare(CLONE_NEWNET): the kernel decides
		{Namespaces(x), auditArchX86_64, 56, 0x20000 | 0x11, RetErrno | EPERM},
		{Namespaces(x), auditArchX86_64, 56, 0x11, RetAllow},        // fork()
		{Namespaces(x), auditArchX86_64, 56, 0x100000, RetAllow},    // clone is not tested for that bit
		{Namespaces(x), auditArchX86_64, 435, 0, RetErrno | ENOSYS}, // clone3
		{Namespaces(arm), auditArchAArch64, 97, 0x20000, RetErrno | EPERM},
		{Namespaces(arm), auditArchAArch64, 40, 0, RetErrno | EPERM}, // mount
		{Keyring(x), auditArchX86_64, 250, 0, RetErrno | EPERM},      // keyctl
		{Keyring(x), auditArchX86_64, 248, 0, RetErrno | EPERM},      // add_key
		{Keyring(x), auditArchX86_64, 249, 0, RetErrno | EPERM},      // request_key
		{Keyring(x), auditArchX86_64, 41, 1, RetAllow},               // socket(AF_UNIX): not its business
		{Keyring(x), auditArchI386, 288, 0, RetKillThread},           // i386 keyctl
		{Keyring(arm), auditArchAArch64, 219, 0, RetErrno | EPERM},   // keyctl
		{Keyring(arm), auditArchAArch64, 217, 0, RetErrno | EPERM},   // add_key
		{Keyring(arm), auditArchAArch64, 250, 0, RetAllow},           // x86_64's keyctl number is not aarch64's
	}
	for i, tt := range tests {
		vm, err := bpf.NewVM(tt.p.Insns)
		if err != nil {
			t.Fatal(err)
		}
		got, err := vm.Run(seccompData(tt.arch, tt.nr, tt.arg0))
		if err != nil || uint32(got) != tt.want {
			t.Errorf("case %d: %s/%s(arch %#x, nr %d, arg0 %#x) = %#x, %v; want %#x", i, tt.p.Name, tt.p.Arch, tt.arch, tt.nr, tt.arg0, uint32(got), err, tt.want)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, a := range Arches {
		for _, p := range []Program{Keyring(a), Unix(a), Namespaces(a), Build(a, Rules{Keyring: true, Unix: true, Namespaces: true})} {
			raw, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) != 8*len(p.Insns) {
				t.Errorf("%s/%s: %d bytes for %d instructions", p.Name, a, len(raw), len(p.Insns))
			}
			back, err := Parse(a, p.Name, raw)
			if err != nil {
				t.Fatal(err)
			}
			if back.String() != p.String() {
				t.Errorf("%s/%s: round trip changed the program:\n%s\nvs\n%s", p.Name, a, back, p)
			}
		}
	}
	if _, err := Parse(X86_64, "x", make([]byte, 7)); err == nil {
		t.Error("Parse accepted 7 bytes")
	}
}

func TestParseRules(t *testing.T) {
	r, err := ParseRules([]policy.SeccompRule{"keyring", "unix", "namespaces"})
	if err != nil || r != (Rules{Keyring: true, Unix: true, Namespaces: true}) || r.Name() != "keyring+unix+namespaces" {
		t.Errorf("ParseRules = %+v, %v", r, err)
	}
	if r, err := ParseRules(nil); err != nil || r != (Rules{}) {
		t.Errorf("ParseRules(nil) = %+v, %v", r, err)
	}
	if _, err := ParseRules([]policy.SeccompRule{"unix", "keyrings"}); err == nil || !strings.Contains(err.Error(), `"keyrings"`) {
		t.Errorf("an unknown rule set was accepted: %v", err)
	}
}

func TestBuilderErrors(t *testing.T) {
	b := newBuilder()
	b.label("back")
	b.add(bpf.LoadAbsolute{Off: 0, Size: 4})
	b.jumpIf(bpf.JumpEqual, 1, "back", "")
	b.add(bpf.RetConstant{Val: RetAllow})
	if _, err := b.program(); err == nil {
		t.Error("a backward jump was accepted")
	}
	b = newBuilder()
	b.jumpIf(bpf.JumpEqual, 1, "nowhere", "")
	b.add(bpf.RetConstant{Val: RetAllow})
	if _, err := b.program(); err == nil || fmt.Sprint(err) != `at l0: label "nowhere" is never placed` {
		t.Errorf("unplaced label: err = %v", err)
	}
}
