package whatwg

import "testing"

func TestHostOf(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"example.com", "example.com", true},
		{"EXAMPLE.com", "example.com", true},
		{"a.b:80", "a.b", true},
		{"user@a.b", "a.b", true},
		{"user:pw@a.b:8080", "a.b", true},
		{"a.b/x", "a.b", true},
		{"a.b?q", "a.b", true},
		{"127.1", "127.0.0.1", true},
		{"2852039166", "169.254.169.254", true},
		{"0x7f.1", "127.0.0.1", true},
		{"0177.0.0.1", "127.0.0.1", true},
		{"1.2.3.4.", "1.2.3.4", true},
		{"x.", "x.", true},
		{"bücher.example", "xn--bcher-kva.example", true},
		{"[::1]", "::1", true},
		{"[0:0::1]", "::1", true},
		{"a.b:", "a.b", true},
		{"%41.b", "a.b", true},
		{"", "", false},
		{"user@", "", false},
		{"a.b:99999", "", false},
		{"a.b:8x", "", false},
		{"256.0.0.1", "", false},
		{"1.2.3.4.5", "", false},
		{"1.256", "1.0.1.0", true},
		{"1.16777216", "", false},
		{"0x", "0.0.0.0", true},
		{"a b.c", "", false},
		{"a<b.c", "", false},
		{"[::1", "", false},
		{"09.1.1.1", "", false},
	}
	for _, tt := range tests {
		got, err := HostOf(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("HostOf(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestIsAbsoluteURL(t *testing.T) {
	tests := map[string]bool{
		"http://proxy.example.com:3128": true,
		"https://proxy":                 true,
		"proxy:3128":                    true,
		"mailto:x@y":                    true,
		"socks5://h:1080":               true,
		"HTTP://Proxy":                  true,
		"http:proxy":                    true,
		" http://proxy ":                true,
		"http://user:pw@proxy:8080/":    true,
		"file:///etc/x":                 true,
		"not a url":                     false,
		"":                              false,
		"://x":                          false,
		"1http://x":                     false,
		"http://":                       false,
		"http://:80":                    false,
		"http://proxy:99999":            false,
		"http://pro xy":                 false,
		"socks5://h:x":                  false,
		"socks5://a b":                  false,
		"http://[::1]:3128":             true,
		"http://[::1":                   false,
	}
	for in, want := range tests {
		if got := IsAbsoluteURL(in); got != want {
			t.Errorf("IsAbsoluteURL(%q) = %v, want %v", in, got, want)
		}
	}
}
