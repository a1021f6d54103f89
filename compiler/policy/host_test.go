package policy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"srt.dev/schema"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		raw, want string
		ok        bool
	}{
		{"Example.COM.", "example.com", true},
		{"example.com..", "example.com.", true},
		{"127.1", "127.0.0.1", true},
		{"2130706433", "127.0.0.1", true},
		{"0x7f.0.0.1", "127.0.0.1", true},
		{"0177.0.0.1", "127.0.0.1", true},
		{"::ffff:127.0.0.1", "127.0.0.1", true},
		{"::ffff:7f00:1", "127.0.0.1", true},
		{"[::ffff:127.0.0.1]", "127.0.0.1", true},
		{"0:0:0:0:0:0:0:1", "::1", true},
		{"[::1]", "::1", true},
		{"1.2.3.4.5", "1.2.3.4.5", true},
		{"256.1.1.1", "256.1.1.1", true},
		{"a_b.example.com", "a_b.example.com", true},
		{"", "", false},
		{"bücher.example", "", false},
		{"user@example.com", "", false},
		{"exa mple.com", "", false},
		{"fe80::1%eth0", "", false},
		{"a%2eb", "", false},
		{string(make([]byte, 256)), "", false},
	}
	for _, tt := range tests {
		got, err := CanonicalHost(tt.raw)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q, ok=%v", tt.raw, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseHostRule(t *testing.T) {
	tests := []struct {
		entry string
		want  HostRule
	}{
		{"example.com", HostRule{Entry: "example.com", Host: "example.com", Port: 0}},
		{"example.com:443", HostRule{Entry: "example.com:443", Host: "example.com", Port: 443}},
		{"*.Example.com:8443", HostRule{Entry: "*.Example.com:8443", Host: "*.example.com", Port: 8443}},
		{"*", HostRule{Entry: "*", Host: "*", Port: 0}},
		{"*:22", HostRule{Entry: "*:22", Host: "*", Port: 22}},
		{"[::1]", HostRule{Entry: "[::1]", Host: "::1", Port: 0}},
		{"[::1]:443", HostRule{Entry: "[::1]:443", Host: "::1", Port: 443}},
		{"[fe80::1%eth0]", HostRule{Entry: "[fe80::1%eth0]", Host: "fe80::1", Port: 0}},
		{"[::ffff:127.0.0.1]", HostRule{Entry: "[::ffff:127.0.0.1]", Host: "127.0.0.1", Port: 0}},
		{"[127.1]:80", HostRule{Entry: "[127.1]:80", Host: "127.0.0.1", Port: 80}},
		{"[user@A.b:80]", HostRule{Entry: "[user@A.b:80]", Host: "a.b", Port: 0}},
		{"[a]b.c", HostRule{Entry: "[a]b.c", Host: "[a]b.c", Port: 0}},
		{"[a.b", HostRule{Entry: "[a.b", Host: "[a.b", Port: 0}},
	}
	for _, tt := range tests {
		got, err := ParseHostRule(tt.entry)
		if err != nil || got != tt.want {
			t.Errorf("ParseHostRule(%q) = %+v, %v; want %+v", tt.entry, got, err, tt.want)
		}
	}
	for _, bad := range []string{"::1", "example.com:0", "example.com:0443", "a:b"} {
		if r, err := ParseHostRule(bad); err == nil {
			t.Errorf("ParseHostRule(%q) = %+v, want an error", bad, r)
		}
	}
}

// TestMatch follows docs/reference.md#host-matching, including its quirks.
func TestMatch(t *testing.T) {
	tests := []struct {
		entry string
		raw   string
		port  int
		want  bool
	}{
		{"*.example.com", "a.example.com", 443, true},
		{"*.example.com", "a.b.example.com", 443, true},
		{"*.example.com", "A.EXAMPLE.COM", 443, true},
		{"*.example.com", "a.example.com.", 443, true},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com", "badexample.com", 443, false},
		{"EXAMPLE.COM", "example.com", 80, true},
		{"example.com:443", "example.com", 443, true},
		{"example.com:443", "example.com", 22, false},
		{"github.com", "github.com", 22, true},
		{"127.0.0.1", "2130706433", 80, true},
		{"127.0.0.1", "127.1", 80, true},
		{"127.0.0.1", "0x7f.0.0.1", 80, true},
		{"127.0.0.1", "[::ffff:127.0.0.1]", 80, true},
		{"[::1]", "0:0:0:0:0:0:0:1", 80, true},
		{"*", "anything.example", 1, true},
		{"*:22", "anything.example", 22, true},
		{"*:22", "anything.example", 443, false},
		{"*.0.0.1", "127.0.0.1", 80, false}, // a wildcard never matches an IP literal
		{"*.*.example.com", "a.b.example.com", 80, false},
		{"a_b.example.com", "a_b.example.com", 80, true},
	}
	for _, tt := range tests {
		r, err := ParseHostRule(tt.entry)
		if err != nil {
			t.Fatal(err)
		}
		host, err := CanonicalHost(tt.raw)
		if err != nil {
			t.Fatalf("CanonicalHost(%q): %v", tt.raw, err)
		}
		if got := r.Match(host, tt.port); got != tt.want {
			t.Errorf("%q matches %q:%d = %v, want %v", tt.entry, tt.raw, tt.port, got, tt.want)
		}
	}
}

func TestHostListFirstMatch(t *testing.T) {
	l, err := ParseHostList([]string{"*.example.com:443", "*.example.com", "*"})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := l.Match("a.example.com", 80); !ok || r.Entry != "*.example.com" {
		t.Errorf("Match = %+v, %v; want the second entry", r, ok)
	}
	if r, _ := l.Match("other.test", 80); r.Entry != "*" {
		t.Errorf("Match = %+v; want *", r)
	}
	if _, ok := (HostList{}).Match("x.y", 1); ok {
		t.Error("the empty list matched")
	}
}

// FuzzCanonicalHost: never panics, and the canonical form is a fixed point
// (except that each pass removes one more trailing dot).
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"Example.COM.", "127.1", "[::1]", "0x7f.1", "a_b.c", "1.2.3.4.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := CanonicalHost(raw)
		if err != nil || h == "" || strings.HasSuffix(h, ".") {
			return
		}
		if h2, err := CanonicalHost(h); err != nil || h2 != h {
			t.Errorf("CanonicalHost(%q) = %q, then %q, %v", raw, h, h2, err)
		}
	})
}

// TestSchemaEntriesParse: every network entry the settings grammar accepts
// in the reference's cases parses here.
func TestSchemaEntriesParse(t *testing.T) {
	b, err := os.ReadFile("../../schema/testdata/settings-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			ID    string          `json:"id"`
			Input json.RawMessage `json:"input"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	// The bracket quirks of docs/reference.md#grammar, which the grammar accepts.
	quirks, _ := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": []string{"[example.com]", "[1.2.3.4]:80", "[127.1]", "[*.example.com]", "[EXAMPLE.com]:8080", "[a.b", "[a.b:80]", "[user@a.b]", "[a.b/x]", "[2852039166]", "[a]b.c", "[::ffff:1.2.3.4]"}, "deniedDomains": []string{"*", "*:22", "[*]"}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	})
	f.Cases = append(f.Cases, struct {
		ID    string          `json:"id"`
		Input json.RawMessage `json:"input"`
	}{"quirks", quirks})
	n := 0
	for _, c := range f.Cases {
		s, diags := schema.Options{OS: schema.OSPosix}.Load(c.ID, c.Input)
		if diags != nil {
			if c.ID == "quirks" {
				t.Fatalf("the grammar refuses the quirks: %v", diags)
			}
			continue
		}
		for _, list := range [][]string{s.Network.AllowedDomains, s.Network.DeniedDomains} {
			if _, err := ParseHostList(list); err != nil {
				t.Errorf("%s: the grammar accepts it, ParseHostList does not: %v", c.ID, err)
			}
			n += len(list)
		}
	}
	if n < 20 {
		t.Errorf("only %d entries checked", n)
	}
}
