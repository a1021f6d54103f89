package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHostIndexAgrees: the index gives the rule the linear Match gives,
// for lists and hosts drawn from a small alphabet of names, wildcards,
// ports, "*" and IP literals, so that rules overlap often.
func TestHostIndexAgrees(t *testing.T) {
	names := []string{"a.com", "b.a.com", "c.b.a.com", "A.COM", "x.org", "127.0.0.1", "::1", "localhost", "b.a.com.evil", "com"}
	rng := rand.New(rand.NewPCG(1, 2))
	entry := func() string {
		var h string
		switch rng.IntN(6) {
		case 0:
			h = "*"
		case 1, 2:
			h = "*." + names[rng.IntN(len(names))]
		default:
			h = names[rng.IntN(len(names))]
		}
		if h == "::1" {
			h = "[::1]"
		}
		if rng.IntN(3) == 0 {
			h += fmt.Sprintf(":%d", 440+rng.IntN(5))
		}
		return h
	}
	checked := 0
	for range 2000 {
		var entries []string
		for range rng.IntN(12) {
			entries = append(entries, entry())
		}
		l, err := ParseHostList(entries)
		if err != nil {
			continue // "*" is a deny entry only, and so on: skip what does not parse
		}
		x := l.Index()
		for _, h := range names {
			host, err := CanonicalHost(h)
			if err != nil {
				continue
			}
			for _, port := range []int{0, 442, 443} {
				want, wok := l.Match(host, port)
				got, gok := x.Match(host, port)
				if wok != gok || want.Entry != got.Entry || want.Origin != got.Origin {
					t.Fatalf("%q on %s:%d: index %v %+v, list %v %+v", entries, host, port, gok, got, wok, want)
				}
				checked++
			}
		}
	}
	if checked < 10000 {
		t.Errorf("only %d answers compared", checked)
	}
}

func BenchmarkHostIndex(b *testing.B) {
	var entries []string
	for i := range 180000 {
		entries = append(entries, fmt.Sprintf("h%d.example%d.com", i, i%97))
	}
	l, _ := ParseHostList(append(entries, "*.wild.example"))
	x := l.Index()
	for _, c := range []struct{ name, host string }{{"listed", "h179999.example64.com"}, {"absent", "nowhere.example.org"}, {"wildcard", "a.b.wild.example"}} {
		b.Run("list/"+c.name, func(b *testing.B) {
			for b.Loop() {
				l.Match(c.host, 443)
			}
		})
		b.Run("index/"+c.name, func(b *testing.B) {
			for b.Loop() {
				x.Match(c.host, 443)
			}
		})
	}
}
