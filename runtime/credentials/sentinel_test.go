package credentials

import (
	"regexp"
	"strings"
	"testing"
)

// TestSentinel: a masked value's stand-in is fake_value_<uuid4>, padded
// with [a-z0-9_-] to the value's length when that is longer
// (docs/tls-and-credentials.md#masked-and-removed-credentials).
func TestSentinel(t *testing.T) {
	shape := regexp.MustCompile(`^fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[a-z0-9_-]*$`)
	seen := map[string]bool{}
	for _, n := range []int{0, 1, 10, 46, 47, 48, 100, 4096} {
		real := strings.Repeat("s", n)
		s, err := Sentinel(real)
		if err != nil {
			t.Fatal(err)
		}
		if want := max(n, 47); len(s) != want || !shape.MatchString(s) {
			t.Errorf("sentinel of %d bytes = %q (%d bytes), want fake_value_<uuid4> padded to %d bytes", n, s, len(s), want)
		}
		if seen[s[:47]] {
			t.Errorf("sentinel %q made twice", s)
		}
		seen[s[:47]] = true
	}
	// The padding draws on all of [a-z0-9_-].
	s, _ := Sentinel(strings.Repeat("s", 47+4000))
	for _, c := range "az09_-" {
		if !strings.ContainsRune(s[47:], c) {
			t.Errorf("4000 bytes of padding hold no %q: %q", c, s[47:])
		}
	}
}
