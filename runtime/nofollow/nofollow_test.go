package nofollow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkErrorQuoted: a link a sandboxed command planted names a target,
// and can sit at a name, of its choosing; the error srt prints about it
// shows both Go-quoted when they are not plain words, and plain ones as
// they are.
func TestLinkErrorQuoted(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "x\x1b[2K")
	if err := os.Symlink("\x1b[2K\rsrt: all clear\n", odd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/home", filepath.Join(dir, "plain")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{odd, `"` + dir + `/x\x1b[2K" is a symbolic link (to "\x1b[2K\rsrt: all clear\n")`},
		{odd + "/a", `"` + dir + `/x\x1b[2K/a" is reached through a symbolic link: "` + dir + `/x\x1b[2K" -> "\x1b[2K\rsrt: all clear\n"`},
		{filepath.Join(dir, "plain", "me"), dir + `/plain/me is reached through a symbolic link: ` + dir + `/plain -> /home`},
	}
	for _, tt := range tests {
		le := FirstLink(tt.path)
		if le == nil {
			t.Fatalf("FirstLink(%q) = nil", tt.path)
		}
		if got := le.Error(); got != tt.want || strings.ContainsAny(got, "\x1b\r\n") {
			t.Errorf("FirstLink(%q).Error() = %q\nwant %q", tt.path, got, tt.want)
		}
	}
}
