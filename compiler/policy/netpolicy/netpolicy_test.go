package netpolicy

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

func rules(t *testing.T, allowed, denied []string) *Rules {
	t.Helper()
	a, err := policy.ParseHostList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	d, err := policy.ParseHostList(denied)
	if err != nil {
		t.Fatal(err)
	}
	return &Rules{Allowed: a, Denied: d}
}

func TestDecide(t *testing.T) {
	r := rules(t, []string{"github.com", "*.example.com:443", "127.0.0.1"}, []string{"evil.example.com", "*:22"})
	r.DeniedReasons = map[string]string{"evil.example.com": "known exfiltration host"}
	tests := []struct {
		host   string
		port   int
		allow  bool
		cause  Cause
		reason string
	}{
		{"github.com", 443, true, CauseNone, ""},
		{"GitHub.com.", 443, true, CauseNone, ""},
		{"github.com", 22, false, CauseDenyList, "host is on the deny list"}, // the deny list comes first
		{"a.example.com", 443, true, CauseNone, ""},
		{"a.example.com", 80, false, CauseNotAllowed, "host is not on the allow list"},
		{"evil.example.com", 443, false, CauseDenyList, "known exfiltration host"},
		{"2130706433", 80, true, CauseNone, ""}, // canonical 127.0.0.1
		{"user@github.com", 443, false, CauseMalformed, "malformed host"},
		{"bücher.example", 443, false, CauseMalformed, "malformed host"},
		{"other.test", 443, false, CauseNotAllowed, "host is not on the allow list"},
	}
	for _, tt := range tests {
		d := Decide(context.Background(), r, tt.host, tt.port, "")
		if d.Allow != tt.allow || d.Cause != tt.cause || d.Reason != tt.reason {
			t.Errorf("Decide(%s:%d) = %+v, want allow=%v cause=%v reason=%q", tt.host, tt.port, d, tt.allow, tt.cause, tt.reason)
		}
	}
	if d := Decide(context.Background(), nil, "github.com", 443, ""); d.Allow || d.Cause != CauseUnavailable || d.Reason != "sandbox policy unavailable" {
		t.Errorf("no rules: %+v", d)
	}
}

func TestDecideLater(t *testing.T) {
	per, _ := policy.ParseHostList([]string{"registry.npmjs.org"})
	base := func() *Rules {
		r := rules(t, []string{"github.com"}, []string{"blocked.test"})
		r.PerCommand = func(id string) (policy.HostList, bool) { return per, id == "cmd-1234567890123456789012" }
		return r
	}
	ctx := context.Background()
	r := base()
	if d := Decide(ctx, r, "registry.npmjs.org", 443, "cmd-1234567890123456789012"); !d.Allow {
		t.Errorf("per-command list ignored: %+v", d)
	}
	if d := Decide(ctx, r, "registry.npmjs.org", 443, "other"); d.Allow {
		t.Errorf("another command's list applied: %+v", d)
	}
	r.Strict = true
	if d := Decide(ctx, r, "registry.npmjs.org", 443, "cmd-1234567890123456789012"); d.Allow || d.Cause != CauseNotAllowed {
		t.Errorf("strict allow list let a per-command entry through: %+v", d)
	}
	// The ask callback: only an explicit allow allows.
	asks := []struct {
		allow  bool
		reason string
		err    error
		want   Decision
	}{
		{true, "", nil, Decision{Allow: true}},
		{false, "", nil, Decision{Cause: CauseUserDenied, Reason: "user denied"}},
		{false, "no <evil.com> today\n\tok", nil, Decision{Cause: CauseUserDenied, Reason: "no evil.com today ok"}},
		{false, "  \n\u200b ", nil, Decision{Cause: CauseUserDenied, Reason: "user denied"}},
		{true, "", errors.New("boom"), Decision{Cause: CauseAskFailed, Reason: "permission prompt failed"}},
	}
	for _, a := range asks {
		r := base()
		var asked string
		r.Ask = func(_ context.Context, host string, _ int) (bool, string, error) {
			asked = host
			return a.allow, a.reason, a.err
		}
		d := Decide(ctx, r, "VM.test.", 443, "")
		if d.Allow != a.want.Allow || d.Cause != a.want.Cause || d.Reason != a.want.Reason {
			t.Errorf("ask %+v: %+v", a, d)
		}
		if asked != "VM.test." {
			t.Errorf("ask got %q, want the raw spelling", asked)
		}
	}
	// Never asked for what a rule decides.
	r = base()
	r.Ask = func(context.Context, string, int) (bool, string, error) { t.Error("asked"); return true, "", nil }
	Decide(ctx, r, "blocked.test", 443, "")
	Decide(ctx, r, "github.com", 443, "")
}

func TestSanitize(t *testing.T) {
	if got := SanitizeReason(strings.Repeat("é", 600), 500); len([]rune(got)) != 500 {
		t.Errorf("cut to %d runes", len([]rune(got)))
	}
	if got := StatusPhrase(strings.Repeat("é", 600)); got != strings.Repeat("?", 500) {
		t.Errorf("StatusPhrase = %q", got)
	}
	if got := SanitizeReason(strings.Repeat("😀", 300), 500); len([]rune(got)) != 250 {
		t.Errorf("a surrogate pair was split: %d runes", len([]rune(got)))
	}
	if got := SanitizeReason("a\u202e\u200bb<c>", 0); got != "a bc" {
		t.Errorf("SanitizeReason = %q", got)
	}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func TestGuard(t *testing.T) {
	var listed []netip.Prefix
	for _, r := range []string{"10.0.0.0/8", "::ffff:192.168.0.0/112", "fd00::/8"} {
		p, err := policy.ParseAddressRange(r)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, p)
	}
	r := rules(t, []string{"[::1]:8080", "127.0.0.1:3000", "vm.test"}, []string{"6.6.6.6"})
	g := &Guard{Rules: r, Listed: listed, HostAddrs: func() []netip.Addr { return addrs("203.0.113.7") }}
	tests := []struct {
		host   string
		port   int
		addrs  []string
		keep   []string
		reason string
	}{
		{"vm.test", 80, []string{"93.184.216.34"}, []string{"93.184.216.34"}, ""},
		{"vm.test", 80, []string{"127.0.0.1"}, nil, "resolved to a loopback address"},
		{"vm.test", 3000, []string{"127.0.0.1"}, []string{"127.0.0.1"}, ""}, // allow-listed literal on that port
		{"vm.test", 80, []string{"::ffff:127.0.0.1"}, nil, "resolved to a loopback address"},
		{"vm.test", 80, []string{"64:ff9b::7f00:1"}, nil, "resolved to a loopback address"},
		{"vm.test", 80, []string{"2002:a9fe:a9fe::"}, nil, "resolved to a link-local address"},
		{"vm.test", 80, []string{"::ffff:0:a9fe:a9fe"}, nil, "resolved to a link-local address"},
		{"vm.test", 80, []string{"169.254.169.254", "0.0.0.0", "224.0.0.1", "100.100.100.200"}, nil, "resolved to an unspecified address / a link-local address / a multicast address / a cloud metadata address"},
		{"vm.test", 80, []string{"10.1.2.3", "192.168.1.1", "fd12::1"}, nil, "resolved to a listed address"},
		{"vm.test", 80, []string{"203.0.113.7"}, nil, "resolved to one of this host's addresses"},
		{"vm.test", 80, []string{"6.6.6.6", "::ffff:6.6.6.6"}, nil, "resolved to a deny-listed address"},
		{"vm.test", 80, []string{"127.0.0.1", "93.184.216.34"}, []string{"93.184.216.34"}, ""},
		{"vm.test", 8080, []string{"::1"}, []string{"::1"}, ""},
		{"localhost", 80, []string{"127.0.0.1", "10.0.0.1"}, []string{"127.0.0.1"}, ""},
		{"app.localhost", 80, []string{"10.0.0.1"}, nil, "resolved to a non-loopback address"},
		{"vm.test", 80, []string{"172.16.0.1"}, []string{"172.16.0.1"}, ""}, // private ranges pass by default
	}
	for _, tt := range tests {
		keep, reason := g.Vet(tt.host, tt.port, addrs(tt.addrs...))
		var got []string
		for _, k := range keep {
			got = append(got, k.String())
		}
		if strings.Join(got, ",") != strings.Join(tt.keep, ",") || reason != tt.reason {
			t.Errorf("Vet(%s:%d, %v) = %v, %q; want %v, %q", tt.host, tt.port, tt.addrs, got, reason, tt.keep, tt.reason)
		}
	}
}
