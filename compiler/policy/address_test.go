package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseAddressRange(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.0.0.0/08", "10.0.0.0/8"},         // the grammar allows the leading zero
		{"192.0.2.1", "192.0.2.1/32"},         // an address is its own range
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"}, // mapped: compared as IPv4
		{"::ffff:192.0.2.1", "192.0.2.1/32"},  // a mapped address too
		{"fe80::1%eth0/64", "fe80::/64"},      // the zone is dropped, and the host bits
		{"2001:db8::/32", "2001:db8::/32"},
	} {
		p, err := ParseAddressRange(c.in)
		if err != nil || p.String() != c.want {
			t.Errorf("ParseAddressRange(%q) = %v, %v; want %s", c.in, p, err, c.want)
		}
	}
	for _, bad := range []string{"", "10.0.0.0/33", "10.0.0.0/x", "example.com", "::ffff:10.0.0.0/95", "10.0.0/8"} {
		if p, err := ParseAddressRange(bad); err == nil {
			t.Errorf("ParseAddressRange(%q) = %v, want an error", bad, p)
		}
	}
}

// A plan carries the range as written; reading it back parses the
// range, and refuses one that does not parse.
func TestAddressRuleJSON(t *testing.T) {
	in := AddressRule{Range: "::ffff:10.0.0.0/104", Origin: Origin{Key: "network.deniedResolvedAddresses[0]"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"range":"::ffff:10.0.0.0/104","origin":{"key":"network.deniedResolvedAddresses[0]"}}`; string(b) != want {
		t.Errorf("marshalled %s, want %s", b, want)
	}
	var out AddressRule
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Range != in.Range || out.Prefix.String() != "10.0.0.0/8" || out.Origin != in.Origin {
		t.Errorf("read back %+v", out)
	}
	err = json.Unmarshal([]byte(`{"range":"10.0.0.0/99","origin":{"key":"x"}}`), &out)
	if err == nil || !strings.Contains(err.Error(), `"10.0.0.0/99"`) {
		t.Errorf("a range that does not parse: %v", err)
	}
}
