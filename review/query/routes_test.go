package query

import (
	"testing"

	"srt.dev/compiler/policy"
)

// TestMitmIndexAgrees compares the index with MitmProxy.Match on every
// kind of domain and host, case and Unicode folding included.
func TestMitmIndexAgrees(t *testing.T) {
	domains, err := policy.ParseHostPatterns([]string{
		"api.example.com", "Cased.Example.COM", "trailing.example.org", "*.wild.example.net", "*.UPPER.example.io",
		"10.1.2.3", "::ffff:10.9.9.9", "fe80::1%eth0", "1.2.3.4", "kelvin.example", "\u212aelvin2.example", "*.\u212a.example", "sso.example",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &policy.MitmProxy{Domains: domains}
	x := newMitmIndex(m)
	hosts := []string{
		"api.example.com", "API.EXAMPLE.COM", "cased.example.com", "trailing.example.org", "trailing.example.org.",
		"a.wild.example.net", "wild.example.net", "a.b.wild.example.net", "x.upper.example.io", "X.UPPER.EXAMPLE.IO",
		"10.1.2.3", "10.9.9.9", "::ffff:10.1.2.3", "fe80::1", "1.2.3.4", "\u212aelvin.example", "kelvin2.example",
		"a.k.example", "a.\u212a.example", "\u017fso.example", "nothing.example", "", ".", "example.com",
	}
	for _, h := range hosts {
		if got, want := x.match(h), m.Match(h); got != want {
			t.Errorf("match(%q) = %v, want %v (MitmProxy.Match)", h, got, want)
		}
	}
}
