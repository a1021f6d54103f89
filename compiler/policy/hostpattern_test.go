package policy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"srt.dev/schema"
)

func TestParseHostPattern(t *testing.T) {
	tests := []struct {
		entry, host string
	}{
		{"example.com", "example.com"},
		{"EXAMPLE.COM", "EXAMPLE.COM"}, // compared case-insensitively
		{"*.Example.com", "*.example.com"},
		{"*.*.example.com", "*.*.example.com"}, // valid, matches nothing
		{"localhost", "localhost"},
		{"127.0.0.1", "127.0.0.1"},
		{"a_b.example.com", "a_b.example.com"},
		{"::1", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"2001:DB8::1", "2001:db8::1"},
		{"fe80::1%eth0", "fe80::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"::ffff:7f00:1", "127.0.0.1"},
	}
	for _, tt := range tests {
		got, err := ParseHostPattern(tt.entry)
		if want := (HostRule{Entry: tt.entry, Host: tt.host}); err != nil || got != want {
			t.Errorf("ParseHostPattern(%q) = %+v, %v; want %+v", tt.entry, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "*", "*:443", "*.com", "*.", "*.example.com.", "*..example.com", "a*.example.com", "*example.com",
		"example.com:443", "[::1]", "[::1]:443", "http://example.com", "example.com/path", "vm", ".example.com",
		"example.com.", "10.0.0.0/8", "2001:db8::1:2:3:4:5:6", "fe80::1%", "fe80::1%e/0", "1.2.3.4:80", "LOCALHOST",
	} {
		if r, err := ParseHostPattern(bad); err == nil {
			t.Errorf("ParseHostPattern(%q) = %+v, want an error", bad, r)
		}
	}
	if l, err := ParseHostPatterns(nil); l != nil || err != nil {
		t.Errorf("ParseHostPatterns(nil) = %v, %v; want nil", l, err)
	}
	if l, err := ParseHostPatterns([]string{}); l == nil || len(l) != 0 || err != nil {
		t.Errorf("ParseHostPatterns([]) = %#v, %v; want an empty list", l, err)
	}
}

// TestHostPatternMatch: a parsed pattern matches a destination as the
// reference matches host patterns (docs/reference.md#host-matching): an
// IPv6 pattern every spelling of its address, a wildcard the names below
// its base and never an address.
func TestHostPatternMatch(t *testing.T) {
	tests := []struct {
		entry, raw string
		want       bool
	}{
		{"::1", "[0:0:0:0:0:0:0:1]", true},
		{"fe80::1%eth0", "fe80::1", true},
		{"::ffff:127.0.0.1", "2130706433", true},
		{"::ffff:127.0.0.1", "127.0.0.2", false},
		{"2001:db8::1", "[2001:DB8:0::1]", true},
		{"*.example.com", "A.Example.com", true},
		{"*.example.com", "example.com", false},
		{"*.0.0.1", "127.0.0.1", false},
		{"Api.Example.com", "api.example.com", true},
		{"127.0.0.1", "127.1", true},
	}
	for _, tt := range tests {
		r, err := ParseHostPattern(tt.entry)
		if err != nil {
			t.Fatal(err)
		}
		host, err := CanonicalHost(tt.raw)
		if err != nil {
			t.Fatalf("CanonicalHost(%q): %v", tt.raw, err)
		}
		for _, port := range []int{80, 443} {
			if got := r.Match(host, port); got != tt.want {
				t.Errorf("%q matches %q:%d = %v, want %v", tt.entry, tt.raw, port, got, tt.want)
			}
		}
	}
}

// TestHostPatternAgreesWithGrammar: ParseHostPattern accepts exactly the
// entries the settings grammar accepts as host patterns, over the
// reference's table and a few thousand generated spellings, so that the
// compiler never refuses valid settings and never reads an entry the
// grammar refuses.
func TestHostPatternAgreesWithGrammar(t *testing.T) {
	entries := []string{
		"example.com", "EXAMPLE.COM", "example.com.", ".example.com", "*.example.com", "*.com", "*", "*:22",
		"a*.example.com", "*example.com", "localhost", "localhost:3000", "example.com:443", "[::1]", "::1",
		"2001:db8::1:443", "[2001:db8::1]:443", "fe80::1%eth0", "127.0.0.1", "10.0.0.0/8", "http://example.com",
		"example.com/path", "vm", "exa mple.com", "bücher.example", "*.*.example.com", "*.0.0.1", "[example.com]",
		"::", "1::", "::1.2.3.4", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "1:2:3:4:5:6:1.2.3.4",
		"1:2:3:4:5:6:7:1.2.3.4", "::01.2.3.4", "12345::", "fe80::1%", "fe80::1%a:b.c-d", "fe80::1%a/b", "a.b\n",
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "1", "0", "ff", "ffff", ".", ".", "*", "*.", ":", ":", "::", "%", "eth0", "/", "-", "_", "x.y", "1.2.3.4", "localhost", "[", "]", " ", "é"}
	for range 3000 {
		var b strings.Builder
		for range 1 + rnd.IntN(7) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		entries = append(entries, b.String())
	}
	// IPv6 spellings: groups of none to five hex digits joined by ":" or
	// "::", sometimes ending in an IPv4 address or carrying a zone.
	hex := "0123456789abcdefABCDEF"
	for range 3000 {
		var b strings.Builder
		for i := range 1 + rnd.IntN(9) {
			if i > 0 || rnd.IntN(4) == 0 {
				b.WriteString([]string{":", ":", ":", "::"}[rnd.IntN(4)])
			}
			n := 1 + rnd.IntN(4)
			if rnd.IntN(10) == 0 {
				n = rnd.IntN(2) * 5 // none, or one too many
			}
			for range n {
				b.WriteByte(hex[rnd.IntN(len(hex))])
			}
		}
		switch rnd.IntN(6) {
		case 0:
			b.WriteString(":1.2.3.4")
		case 1:
			b.WriteString(":01.2.3.4")
		case 2:
			b.WriteString([]string{"%eth0", "%", "%a:b.c-d", "%a/b", "%é"}[rnd.IntN(5)])
		}
		entries = append(entries, b.String())
	}
	doc, _ := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{"excludeDomains": entries}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	})
	_, diags := schema.Options{OS: schema.OSPosix}.Load("s.json", doc)
	refused := map[int]bool{}
	for _, d := range diags {
		p := d.Path
		if len(p) != 4 || p.String() != "network.tlsTerminate.excludeDomains"+p[3:].String() {
			t.Fatalf("a diagnostic outside excludeDomains: %v", d)
		}
		refused[p[3].(int)] = true
	}
	accepted := 0
	for i, e := range entries {
		_, err := ParseHostPattern(e)
		if (err == nil) == refused[i] {
			t.Errorf("%q: the grammar refuses it = %v, ParseHostPattern: %v", e, refused[i], err)
		}
		if err == nil {
			accepted++
		}
	}
	t.Logf("%d entries: %d accepted, %d refused", len(entries), accepted, len(refused))
	if accepted < 100 || len(refused) < 100 {
		t.Errorf("%d accepted and %d refused: the entries do not test both sides", accepted, len(refused))
	}
}
