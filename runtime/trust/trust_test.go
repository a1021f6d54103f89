//go:build unix

package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/nofollow"
)

const (
	digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	// wide and narrow are two versions of one plan directory's plan.
	wide   = "1111111111111111111111111111111111111111111111111111111111111111"
	narrow = "2222222222222222222222222222222222222222222222222222222222222222"
)

// TestTrust: a digest is trusted once recorded, only there, and only as
// a regular file in a directory private to the user; nothing but a
// digest is one; no home directory is made.
func TestTrust(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if ok, err := Trusted("/p/plan", digest); ok || err != nil {
		t.Fatalf("Trusted before Trust = %v, %v", ok, err)
	}
	if err := Trust("/p/plan", digest, "test"); err != nil {
		t.Fatal(err)
	}
	if ok, err := Trusted("/p/plan", digest); !ok || err != nil {
		t.Fatalf("Trusted after Trust = %v, %v", ok, err)
	}
	other := strings.Replace(digest, "0", "f", 1)
	if ok, _ := Trusted("/p/plan", other); ok {
		t.Error("another digest is trusted")
	}
	for _, bad := range []string{"", "../x", digest[:63], strings.ToUpper(digest[:2]) + "zz" + digest[4:]} {
		if err := Trust("/p/plan", bad, "test"); err == nil {
			t.Errorf("Trust(%q) accepted it", bad)
		}
		if ok, _ := Trusted("/p/plan", bad); ok {
			t.Errorf("Trusted(%q)", bad)
		}
	}
	dir := filepath.Join(state, "srt", "trusted-plans")
	// A directory at a record's name is not a record.
	testenv.Mkdir(t, filepath.Join(dir, recordName("/q/plan")), 0o700)
	if ok, err := Trusted("/q/plan", digest); ok || err == nil {
		t.Errorf("a directory counts as a record: Trusted = %v, %v", ok, err)
	}
	// A record directory others may write is not trusted.
	testenv.Chmod(t, dir, 0o777)
	if ok, err := Trusted("/p/plan", digest); ok || err == nil {
		t.Errorf("in a directory others may write: Trusted = %v, %v", ok, err)
	}
	testenv.Chmod(t, dir, 0o700)

	// Without XDG_STATE_HOME, under the home directory, which srt does
	// not make.
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", filepath.Join(state, "no-such-home"))
	if err := Trust("/p/plan", digest, "test"); err == nil {
		t.Error("Trust made a home directory")
	}
	if _, err := os.Stat(filepath.Join(state, "no-such-home")); err == nil {
		t.Error("the home directory was made")
	}
}

// TestOnePlanPerDirectory: a directory trusts the plan recorded last for
// it, and no other: not an older version of its own (rolled back), nor
// the plan trusted in another directory (substituted), nor its own plan
// moved or copied elsewhere.
func TestOnePlanPerDirectory(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, step := range []struct{ path, digest, by string }{
		{"/home/u/proj/plan", wide, "srtc compile"},
		{"/home/u/proj/plan", narrow, "srtc compile"},
		{"/home/u/other/plan", digest, "srt trust"},
	} {
		if err := Trust(step.path, step.digest, step.by); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, path, digest string
		want               bool
	}{
		{"the last version", "/home/u/proj/plan", narrow, true},
		{"an older version rolled back", "/home/u/proj/plan", wide, false},
		{"another directory's plan substituted", "/home/u/proj/plan", digest, false},
		{"the other directory's own plan", "/home/u/other/plan", digest, true},
		{"a plan moved elsewhere", "/home/u/moved/plan", narrow, false},
		{"a plan copied elsewhere", "/tmp/plan", digest, false},
		{"a directory below the trusted one", "/home/u/proj/plan/plan", narrow, false},
		{"a directory above the trusted one", "/home/u/proj", narrow, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := Trusted(c.path, c.digest); got != c.want || err != nil {
				t.Errorf("Trusted(%q, %.8s…) = %v, %v, want %v", c.path, c.digest, got, err, c.want)
			}
		})
	}
	r, err := Lookup("/home/u/proj/plan")
	if err != nil || r == nil || r.Digest != narrow || r.By != "srtc compile" || r.Path != "/home/u/proj/plan" {
		t.Errorf("Lookup = %+v, %v, want the narrow plan by srtc compile", r, err)
	}
	if r, err := Lookup("/home/u/none"); r != nil || err != nil {
		t.Errorf("Lookup of a directory never trusted = %+v, %v, want nil, nil", r, err)
	}
	// Trusting the older version again (after a review) replaces the
	// newer one.
	if err := Trust("/home/u/proj/plan", wide, "srt trust"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := Trusted("/home/u/proj/plan", narrow); ok {
		t.Error("the version replaced is still trusted")
	}
	if ok, _ := Trusted("/home/u/proj/plan", wide); !ok {
		t.Error("the version trusted again is not")
	}
}

// TestOnlyCleanAbsolutePaths: the record names directories by their
// absolute, clean path; anything else is refused, never looked up.
func TestOnlyCleanAbsolutePaths(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, p := range []string{"", "plan", "./plan", "/p/../p/plan", "/p/plan/", "/p//plan"} {
		if err := Trust(p, digest, "test"); err == nil {
			t.Errorf("Trust(%q) accepted it", p)
		}
		if _, err := Lookup(p); err == nil {
			t.Errorf("Lookup(%q) accepted it", p)
		}
	}
}

// TestRecordOfEarlierForm: a record of the earlier form (a file per
// trusted digest, for any directory) trusts nothing; TrustedBefore only
// tells that it held the plan in that directory.
func TestRecordOfEarlierForm(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "srt", "trusted-plans")
	testenv.MkdirAll(t, dir, 0o700)
	testenv.Chmod(t, filepath.Dir(dir), 0o700)
	testenv.WriteFile(t, filepath.Join(dir, wide), []byte(`{"digest": "`+wide+`", "path": "/p/plan", "by": "srtc compile", "time": "2024-01-01T00:00:00Z"}`+"\n"), 0o600)
	if ok, err := Trusted("/p/plan", wide); ok || err != nil {
		t.Errorf("Trusted by a record of the earlier form = %v, %v, want false, nil", ok, err)
	}
	if !TrustedBefore("/p/plan", wide) {
		t.Error("TrustedBefore(/p/plan, wide) = false, want true")
	}
	for _, c := range []struct{ path, digest string }{{"/q/plan", wide}, {"/p/plan", narrow}} {
		if TrustedBefore(c.path, c.digest) {
			t.Errorf("TrustedBefore(%q, %.8s…) = true, want false", c.path, c.digest)
		}
	}
}

// TestPlanDir: a plan directory is named by its absolute, clean path,
// the working directory as the process has it; a link on the way, the
// directory itself included, is refused and named.
func TestPlanDir(t *testing.T) {
	base := t.TempDir()
	testenv.MkdirAll(t, filepath.Join(base, "proj", "plan"), 0o755)
	testenv.MkdirAll(t, filepath.Join(base, "other", "plan"), 0o755)
	testenv.Symlink(t, filepath.Join(base, "other", "plan"), filepath.Join(base, "proj", "link"))
	testenv.Symlink(t, filepath.Join(base, "proj"), filepath.Join(base, "via"))
	t.Chdir(filepath.Join(base, "proj"))
	for _, c := range []struct{ in, want, link string }{
		{"plan", filepath.Join(base, "proj", "plan"), ""},
		{"./plan/", filepath.Join(base, "proj", "plan"), ""},
		{"../proj/plan", filepath.Join(base, "proj", "plan"), ""},
		{filepath.Join(base, "other", "plan"), filepath.Join(base, "other", "plan"), ""},
		{"link", "", filepath.Join(base, "proj", "link")},
		{filepath.Join(base, "via", "plan"), "", filepath.Join(base, "via")},
	} {
		got, err := PlanDir(c.in)
		var le *nofollow.LinkError
		switch {
		case c.link != "" && (!errors.As(err, &le) || le.Link != c.link):
			t.Errorf("PlanDir(%q) = %q, %v, want the link %s named", c.in, got, err, c.link)
		case c.link == "" && (got != c.want || err != nil):
			t.Errorf("PlanDir(%q) = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
}
