//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryLimits: on cgroup v1 the memory limit is split between user
// and kernel memory and socket buffers, which together never exceed it.
func TestMemoryLimits(t *testing.T) {
	for _, tc := range []struct{ mib, user, sockets int64 }{
		{16, 12, 4},
		{64, 48, 16},
		{96, 72, 24},
		{256, 192, 64},
		{2048, 1984, 64},
	} {
		user, sockets := memoryLimits(tc.mib << 20)
		if user != tc.user<<20 || sockets != tc.sockets<<20 || user+sockets != tc.mib<<20 {
			t.Errorf("memoryLimits(%d MiB) = %d, %d MiB, want %d, %d", tc.mib, user>>20, sockets>>20, tc.user, tc.sockets)
		}
	}
}

// fakeCgroup makes a directory with the given control files, empty.
func fakeCgroup(t *testing.T, files ...string) string {
	t.Helper()
	d := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func readCg(t *testing.T, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLimitMemoryV1 sets the socket buffers' limit beside the memory
// limit on cgroup v1, and refuses a cgroup where it cannot (no
// memory.kmem.tcp.limit_in_bytes): the command could pin kernel memory in
// socket buffers beyond the limit there.
func TestLimitMemoryV1(t *testing.T) {
	d := fakeCgroup(t, "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.kmem.tcp.limit_in_bytes")
	c := &cgroupSet{dir: map[string]string{"memory": d}}
	if err := c.limitMemory(64 << 20); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"memory.limit_in_bytes":          "50331648",
		"memory.memsw.limit_in_bytes":    "50331648",
		"memory.kmem.tcp.limit_in_bytes": "16777216",
	} {
		if got := readCg(t, d, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}

	d = fakeCgroup(t, "memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
	c = &cgroupSet{dir: map[string]string{"memory": d}}
	err := c.limitMemory(64 << 20)
	if err == nil || !strings.Contains(err.Error(), "socket buffers") {
		t.Errorf("limitMemory without memory.kmem.tcp.limit_in_bytes: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(d, "memory.kmem.tcp.limit_in_bytes")); err == nil {
		t.Error("limitMemory made a control file the kernel lacks")
	}
}

// TestLimitMemoryV2: memory.max alone, which counts socket buffers too.
func TestLimitMemoryV2(t *testing.T) {
	d := fakeCgroup(t, "memory.max", "memory.swap.max")
	c := &cgroupSet{v2: true, dir: map[string]string{"memory": d}}
	if err := c.limitMemory(64 << 20); err != nil {
		t.Fatal(err)
	}
	if got := readCg(t, d, "memory.max"); got != "67108864" {
		t.Errorf("memory.max = %q, want the whole limit", got)
	}
	if got := readCg(t, d, "memory.swap.max"); got != "0" {
		t.Errorf("memory.swap.max = %q, want 0", got)
	}
}

// TestMemoryDoctor: srt doctor says what limits.memoryMiB counts on each
// kind of host.
func TestMemoryDoctor(t *testing.T) {
	v1 := fakeCgroup(t, "memory.kmem.tcp.limit_in_bytes")
	noTCP := fakeCgroup(t)
	for _, tc := range []struct {
		name string
		c    *cgroupSet
		opts []string
		want []string
	}{
		{"no cgroup", &cgroupSet{}, nil, []string{"RLIMIT_DATA", "socket and pipe buffers are not counted"}},
		{"v2", &cgroupSet{v2: true, dir: map[string]string{"memory": "x"}}, nil, []string{"memory.max, which counts user memory, kernel memory and socket buffers together"}},
		{"v2 nosocket", &cgroupSet{v2: true, dir: map[string]string{"memory": "x"}}, []string{"nosocket"}, []string{"cgroup.memory=nosocket: socket buffers are not counted"}},
		{"v1", &cgroupSet{parent: map[string]string{"memory": v1}, dir: map[string]string{"memory": "x"}}, nil, []string{"a quarter (at most 64 MiB) for TCP and UDP socket buffers"}},
		{"v1 nokmem", &cgroupSet{parent: map[string]string{"memory": v1}, dir: map[string]string{"memory": "x"}}, []string{"nokmem"}, []string{"cgroup.memory=nokmem: kernel memory"}},
		{"v1 without kmem.tcp", &cgroupSet{parent: map[string]string{"memory": noTCP}, dir: map[string]string{"memory": "x"}}, nil, []string{"srt refuses limits.memoryMiB here"}},
	} {
		got := memoryDoctor(tc.c, tc.opts)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: memoryDoctor = %q, want it to say %q", tc.name, got, w)
			}
		}
	}
}
