//go:build linux && amd64

package initstep

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestWatchProgram runs the watch filter in x/net/bpf's VM against the
// answers written by hand from the x86-64 system call table: the calls
// that write to a path are handed to srt, an open only when its flags
// write, and those that may change a process's root or mount namespace,
// unshare and clone only with CLONE_NEWNS; nothing else, nor another
// architecture's calls.
func TestWatchProgram(t *testing.T) {
	prog, err := WatchProgram()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.Instruction, len(prog))
	for i, f := range prog {
		raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}.Disassemble()
	}
	vm, err := bpf.NewVM(raw)
	if err != nil {
		t.Fatal(err)
	}
	const (
		x8664  = 0xc000003e
		i386   = 0x40000003
		notify = 0x7fc00000
		allow  = 0x7fff0000
	)
	// data encodes struct seccomp_data for the VM, which loads words
	// big-endian: each 32-bit field at the offset of the kernel's
	// little-endian layout.
	data := func(arch, nr uint32, args ...uint64) []byte {
		b := make([]byte, 64)
		binary.BigEndian.PutUint32(b[0:], nr)
		binary.BigEndian.PutUint32(b[4:], arch)
		for i, a := range args {
			binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
			binary.BigEndian.PutUint32(b[20+8*i:], uint32(a>>32))
		}
		return b
	}
	for _, c := range []struct {
		name string
		arch uint32
		nr   uint32
		args []uint64
		want uint32
	}{
		{"openat read", x8664, 257, []uint64{0, 0, 0}, allow},
		{"openat read, directory, cloexec", x8664, 257, []uint64{0, 0, 0o2000000 | 0o200000}, allow},
		{"openat write", x8664, 257, []uint64{0, 0, 1}, notify},
		{"openat read-write", x8664, 257, []uint64{0, 0, 2}, notify},
		{"openat create", x8664, 257, []uint64{0, 0, 0o100}, notify},
		{"openat truncate", x8664, 257, []uint64{0, 0, 0o1000}, notify},
		{"openat flags only in the high word", x8664, 257, []uint64{0, 0, 1 << 32}, allow},
		{"open read", x8664, 2, []uint64{0, 0}, allow},
		{"open write", x8664, 2, []uint64{0, 1}, notify},
		{"openat2 (flags in a struct)", x8664, 437, nil, notify},
		{"creat", x8664, 85, nil, notify},
		{"mkdir", x8664, 83, nil, notify},
		{"mkdirat", x8664, 258, nil, notify},
		{"unlink", x8664, 87, nil, notify},
		{"unlinkat", x8664, 263, nil, notify},
		{"rmdir", x8664, 84, nil, notify},
		{"rename", x8664, 82, nil, notify},
		{"renameat2", x8664, 316, nil, notify},
		{"link", x8664, 86, nil, notify},
		{"symlinkat", x8664, 266, nil, notify},
		{"truncate", x8664, 76, nil, notify},
		{"chmod", x8664, 90, nil, notify},
		{"fchmodat2", x8664, 452, nil, notify},
		{"utimensat", x8664, 280, nil, notify},
		{"unshare, a new mount namespace", x8664, 272, []uint64{0x20000 | 0x10000000}, notify},
		{"unshare, a new user namespace only", x8664, 272, []uint64{0x10000000}, allow},
		{"clone, a new mount namespace", x8664, 56, []uint64{0x20000 | 17}, notify},
		{"clone, fork", x8664, 56, []uint64{0x01200000 | 17}, allow},
		{"clone3 (flags in a struct)", x8664, 435, nil, notify},
		{"chroot", x8664, 161, nil, notify},
		{"pivot_root", x8664, 155, nil, notify},
		{"setns", x8664, 308, nil, notify},
		{"read", x8664, 0, nil, allow},
		{"write", x8664, 1, nil, allow},
		{"stat", x8664, 4, nil, allow},
		{"ftruncate (a descriptor, no path)", x8664, 77, nil, allow},
		{"x32 openat", x8664, 0x40000000 | 257, []uint64{0, 0, 1}, allow},
		{"i386 open", i386, 5, []uint64{0, 1}, allow},
	} {
		got, err := vm.Run(data(c.arch, c.nr, c.args...))
		if err != nil || uint32(got) != c.want {
			t.Errorf("%s: %#x, %v; want %#x", c.name, got, err, c.want)
		}
	}
	if unix.SECCOMP_RET_USER_NOTIF != notify || unix.SECCOMP_RET_ALLOW != allow {
		t.Fatal("the kernel's return values differ from the test's")
	}
}
