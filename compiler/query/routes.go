package query

import (
	"net/netip"
	"strings"

	"srt.dev/compiler/policy"
)

// A mitmIndex answers policy.MitmProxy.Match without reading every domain:
// explain and diff ask it for every allowed host. ASCII names are found
// by a map, wildcards by the suffixes of the host after each ".", IP
// literals by their address; a name with other characters, which
// strings.EqualFold compares with Unicode's case folding, is compared
// with Match's own rule. The answer is Match's (TestMitmIndexAgrees).
type mitmIndex struct {
	exact map[string]bool     // lower-cased ASCII names, trailing "." dropped
	wild  map[string]bool     // lower-cased bases of "*.base"
	addrs map[netip.Addr]bool // unmapped, without zone
	rest  *policy.MitmProxy   // the names the maps cannot hold
	all   *policy.MitmProxy   // every domain, for a host that is not ASCII
}

func newMitmIndex(m *policy.MitmProxy) *mitmIndex {
	x := &mitmIndex{exact: map[string]bool{}, wild: map[string]bool{}, addrs: map[netip.Addr]bool{}, rest: &policy.MitmProxy{}, all: m}
	for _, d := range m.Domains {
		if base, ok := strings.CutPrefix(d, "*."); ok {
			x.wild[strings.ToLower(base)] = true
			continue
		}
		if a, err := netip.ParseAddr(d); err == nil {
			x.addrs[a.WithZone("").Unmap()] = true
			continue
		}
		if isASCII(d) {
			x.exact[strings.ToLower(strings.TrimSuffix(d, "."))] = true
			continue
		}
		x.rest.Domains = append(x.rest.Domains, d)
	}
	return x
}

// match is MitmProxy.Match(host).
func (x *mitmIndex) match(host string) bool {
	if !isASCII(host) {
		return x.all.Match(host) // EqualFold folds "\u212a" to "k"
	}
	ip, err := netip.ParseAddr(host)
	if err == nil {
		if x.addrs[ip.Unmap()] {
			return true
		}
	} else {
		lower := strings.ToLower(host)
		for i := 0; i < len(lower); i++ {
			if lower[i] == '.' && x.wild[lower[i+1:]] {
				return true
			}
		}
	}
	if x.exact[strings.ToLower(host)] {
		return true
	}
	return len(x.rest.Domains) > 0 && x.rest.Match(host)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
