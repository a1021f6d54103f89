package policy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// AddressRule is one deniedResolvedAddresses entry: Range as written
// (with any zone), Prefix as the proxies compare with it. Prefix is not
// written to plan.json: it is read from Range, with the same parser, when
// a plan is read back, so a plan whose Range does not parse is refused
// there.
type AddressRule struct {
	Range  string       `json:"range"`
	Prefix netip.Prefix `json:"-"`
	Origin Origin       `json:"origin"`
}

// ParseAddressRange reads a deniedResolvedAddresses entry (an address or
// CIDR range, validated by the grammar): the zone is dropped, and an
// IPv4-mapped range becomes its IPv4 equivalent, since the proxies
// compare with addresses unmapped.
func ParseAddressRange(s string) (netip.Prefix, error) {
	addr, bits, hasBits := strings.Cut(s, "/")
	if i := strings.IndexByte(addr, '%'); i >= 0 {
		addr = addr[:i]
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, err
	}
	n := a.BitLen()
	if hasBits {
		if n, err = strconv.Atoi(bits); err != nil {
			return netip.Prefix{}, fmt.Errorf("prefix length %q: %w", bits, err)
		}
	}
	if a.Is4In6() {
		a, n = a.Unmap(), n-96
	}
	return a.Prefix(n)
}

// UnmarshalJSON reads the rule and parses its range.
func (r *AddressRule) UnmarshalJSON(b []byte) error {
	type plain AddressRule
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	prefix, err := ParseAddressRange(p.Range)
	if err != nil {
		return fmt.Errorf("deniedResolvedAddresses entry %q: %w", p.Range, err)
	}
	p.Prefix = prefix
	*r = AddressRule(p)
	return nil
}
