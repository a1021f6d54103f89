package policy

import "testing"

func TestNoProxy(t *testing.T) {
	n := ParseNoProxy(" Example.com, .dot.test,*.star.test, 10.0.0.0/8 ,192.0.2.7:8080,[2001:db8::1], host.test:443,[2001:db8::2]:3128,,")
	for host, want := range map[string]bool{
		"example.com":      true,
		"a.b.example.com":  true,
		"badexample.com":   false,
		"dot.test":         true, // a leading dot matches the apex too
		"x.dot.test":       true,
		"star.test":        true,
		"x.star.test":      true,
		"host.test":        true, // the port is ignored
		"10.1.2.3":         true,
		"11.0.0.1":         false,
		"192.0.2.7":        true,
		"192.0.2.8":        false,
		"2001:db8::1":      true,
		"2001:db8::2":      true, // bracketed, with a port
		"example.org":      false,
		"example.com.evil": false,
	} {
		if got := n.Match(host); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
	if !ParseNoProxy("*").Match("anything.test") || ParseNoProxy("").Match("anything.test") {
		t.Error("* must match everything, an empty list nothing")
	}
}
