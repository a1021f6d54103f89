package policy

import (
	"strings"
	"testing"
)

func TestCommandNoProxy(t *testing.T) {
	for _, tt := range []struct {
		name    string
		allowed []string
		want    string
		left    string // entry=rule, comma-separated
	}{
		{"nothing allowed", nil, ReferenceNoProxy, ""},
		{"public hosts", []string{"example.com", "*.github.com:443", "8.8.8.8"}, ReferenceNoProxy, ""},
		{"localhost with a port", []string{"example.com", "localhost:9443"},
			"127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "localhost=localhost:9443"},
		{"localhost in capitals", []string{"LOCALHOST"},
			"127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "localhost=LOCALHOST"},
		{"a name below localhost", []string{"app.localhost:3000"},
			"127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "localhost=app.localhost:3000"},
		{"a wildcard below localhost", []string{"*.app.localhost"},
			"127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "localhost=*.app.localhost"},
		{"127.0.0.1", []string{"127.0.0.1:8080", "127.0.0.1:8081"},
			"localhost,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "127.0.0.1=127.0.0.1:8080"},
		{"an IPv4-mapped 127.0.0.1", []string{"[::ffff:127.0.0.1]:80"},
			"localhost,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "127.0.0.1=[::ffff:127.0.0.1]:80"},
		{"::1", []string{"[::1]:9443"},
			"localhost,127.0.0.1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "::1=[::1]:9443"},
		{"127.0.0.2 is not listed", []string{"127.0.0.2"}, ReferenceNoProxy, ""},
		{"private and link-local addresses", []string{"10.1.2.3:80", "192.168.0.9", "169.254.169.254"},
			"localhost,127.0.0.1,::1,172.16.0.0/12", "169.254.0.0/16=169.254.169.254,10.0.0.0/8=10.1.2.3:80,192.168.0.0/16=192.168.0.9"},
		{"all three loopback names", []string{"localhost", "127.0.0.1", "[::1]"},
			"169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "localhost=localhost,127.0.0.1=127.0.0.1,::1=[::1]"},
		{"a name that only looks local", []string{"localhost.example.com", "*.localhost.example.com"}, ReferenceNoProxy, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, left := CommandNoProxy(ReferenceNoProxy, mustList(t, tt.allowed...))
			var lefts []string
			for _, o := range left {
				lefts = append(lefts, o.Entry+"="+o.Rule.Entry)
			}
			if got != tt.want || strings.Join(lefts, ",") != tt.left {
				t.Errorf("CommandNoProxy(%q) = %q, %q; want %q, %q", tt.allowed, got, lefts, tt.want, tt.left)
			}
		})
	}
	// Every list counts: a per-command list adds to the policy's.
	if got, _ := CommandNoProxy(OpenLoopbackNoProxy, mustList(t, "example.com"), mustList(t, "localhost:3000")); got != "127.0.0.1,::1" {
		t.Errorf("CommandNoProxy with two lists = %q", got)
	}
	if got, _ := CommandNoProxy(OpenLoopbackNoProxy, mustList(t, "localhost", "127.0.0.1", "[::1]")); got != "" {
		t.Errorf("CommandNoProxy with every loopback name allowed = %q, want empty", got)
	}
}

func TestNamesLoopback(t *testing.T) {
	for entry, want := range map[string]bool{
		"localhost": true, "localhost:9443": true, "LocalHost": true, "app.localhost": true, "*.app.localhost": true,
		"127.0.0.1": true, "127.0.0.2:80": true, "[::1]": true, "[::ffff:127.0.0.1]": true,
		"example.com": false, "localhost.example.com": false, "10.0.0.1": false, "[2001:db8::1]": false,
	} {
		if got := mustList(t, entry)[0].NamesLoopback(); got != want {
			t.Errorf("%q: NamesLoopback() = %v, want %v", entry, got, want)
		}
	}
}

func mustList(t *testing.T, entries ...string) HostList {
	t.Helper()
	l, err := ParseHostList(entries)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
