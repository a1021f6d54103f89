package testenv

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that records what Require says instead of
// stopping the test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skipf(format string, args ...any)  { r.skip = fmt.Sprintf(format, args...) }

// TestRequireMissing: a missing program fails the test with the install
// command under SRT_REQUIRE_SANDBOX=1, and otherwise skips it saying so.
func TestRequireMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("under -short, Require skips every live test first")
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SRT_REQUIRE_SANDBOX", "1")
	r := &recorder{TB: t}
	if got := Require(r, "bwrap"); got != nil || r.skip != "" ||
		r.fatal != "bwrap not found, and SRT_REQUIRE_SANDBOX=1 makes that a failure: install it (apt-get install -y bubblewrap)" {
		t.Errorf("Require with SRT_REQUIRE_SANDBOX=1 = %q, fatal %q, skip %q", got, r.fatal, r.skip)
	}
	t.Setenv("SRT_REQUIRE_SANDBOX", "")
	r = &recorder{TB: t}
	if got := Require(r, "tinyproxy"); got != nil || r.fatal != "" ||
		r.skip != "skipped: tinyproxy not found (install it: apt-get install -y tinyproxy; with SRT_REQUIRE_SANDBOX=1 this is a failure)" {
		t.Errorf("Require = %q, fatal %q, skip %q", got, r.fatal, r.skip)
	}
}
