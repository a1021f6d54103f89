//go:build linux

package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/emit/bwrap"
	"srt.dev/internal/testenv"
	"srt.dev/internal/untrusted"
)

// TestRootCanCreate: the sandbox's root creates a name in a directory of
// root's, and elsewhere only where the permission bits let its class.
func TestRootCanCreate(t *testing.T) {
	for _, tc := range []struct {
		uid, gid, mode uint32
		groups         []int
		want           bool
	}{
		{0, 0, 0o500, nil, true},            // root's own: the capabilities apply
		{0, 5, 0o755, nil, true},            // owner bits
		{0, 5, 0o555, nil, false},           // owner without write
		{1001, 1001, 0o755, nil, false},     // another user's project
		{1001, 1001, 0o777, nil, true},      // writable by all
		{1001, 1001, 0o1777, nil, true},     // /tmp-like
		{1001, 0, 0o775, nil, true},         // root's group may write
		{1001, 0, 0o755, nil, false},        // root's group may not
		{1001, 27, 0o775, []int{27}, true},  // a supplementary group may
		{1001, 27, 0o775, []int{28}, false}, // another group
		{1001, 1001, 0o773, nil, true},      // others may (owner's group not root's)
	} {
		if got := rootCanCreate(tc.uid, tc.gid, tc.mode, 0, tc.groups); got != tc.want {
			t.Errorf("owner %d group %d mode %o groups %v: %v, want %v", tc.uid, tc.gid, tc.mode, tc.groups, got, tc.want)
		}
	}
}

// TestDropsAllCaps: only a plan whose command keeps no capability lets
// root skip a mount point in another user's directory.
func TestDropsAllCaps(t *testing.T) {
	with := []bwrap.Step{{Args: []string{"--unshare-user"}}, {Args: []string{"--cap-drop", "ALL"}}}
	without := []bwrap.Step{{Args: []string{"--unshare-user"}}, {Args: []string{"--cap-drop", "CAP_SYS_ADMIN"}}}
	if !dropsAllCaps(with) || dropsAllCaps(without) || dropsAllCaps(nil) {
		t.Errorf("dropsAllCaps: with %v, without %v, none %v", dropsAllCaps(with), dropsAllCaps(without), dropsAllCaps(nil))
	}
}

// TestForeignRootQuoted: the warning about a write root of another user's
// shows the root through untrusted.Quote: an allowWrite glob may match a
// name a sandboxed run made, with ESC, CR or LF in it.
func TestForeignRootQuoted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a directory of another user's needs root to make")
	}
	dir := filepath.Join(t.TempDir(), "out\x1b[2K\r\nsrt: all clear")
	testenv.MkdirAll(t, dir, 0o755)
	testenv.Chown(t, dir, 65534, 65534)
	got := foreignRoot(dir, true)
	if !strings.HasPrefix(got, untrusted.Quote(dir)+" is a write root") || strings.ContainsAny(got, "\x1b\r\n") {
		t.Errorf("foreignRoot(%q) = %q, want the root quoted", dir, got)
	}
}
