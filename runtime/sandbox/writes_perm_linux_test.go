//go:build linux

package sandbox

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCredsPermits: the owner's bits for the owner only, the group's for
// a member, the others' for the rest; with an access ACL, the group bits
// (its mask) or the others' for anyone but the owner.
func TestCredsPermits(t *testing.T) {
	c := creds{uid: 1000, gid: 1000, groups: []uint32{1000, 27}}
	for _, tc := range []struct {
		name string
		f    fileMode
		mask uint32
		want bool
	}{
		{"owner rwx", fileMode{mode: 0o700, uid: 1000, gid: 0}, unix.W_OK | unix.X_OK, true},
		{"owner r-x, others rwx", fileMode{mode: 0o507, uid: 1000, gid: 0}, unix.W_OK, false},
		{"group member", fileMode{mode: 0o770, uid: 0, gid: 27}, unix.W_OK | unix.X_OK, true},
		{"group member, group r-x", fileMode{mode: 0o757, uid: 0, gid: 27}, unix.W_OK, false},
		{"other", fileMode{mode: 0o755, uid: 0, gid: 0}, unix.W_OK, false},
		{"other, o+w", fileMode{mode: 0o777, uid: 0, gid: 0}, unix.W_OK | unix.X_OK, true},
		{"ACL mask", fileMode{mode: 0o770, uid: 0, gid: 0, acl: true}, unix.W_OK | unix.X_OK, true},
		{"ACL, no mask", fileMode{mode: 0o750, uid: 0, gid: 0, acl: true}, unix.W_OK, false},
	} {
		if got := c.permits(tc.f, tc.mask); got != tc.want {
			t.Errorf("%s: permits(%+v, %o) = %v, want %v", tc.name, tc.f, tc.mask, got, tc.want)
		}
	}
}

// TestReadCreds: this process's credentials, as /proc shows them.
func TestReadCreds(t *testing.T) {
	c, ok := readCreds(os.Getpid())
	if !ok {
		t.Fatal("readCreds(self) failed")
	}
	if c.uid != uint32(os.Geteuid()) || c.gid != uint32(os.Getegid()) {
		t.Errorf("readCreds(self) = %+v, want uid %d gid %d", c, os.Geteuid(), os.Getegid())
	}
	if _, ok := readCreds(-1); ok {
		t.Error("readCreds(-1) succeeded")
	}
}
