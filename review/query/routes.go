package query

import (
	"net/netip"
	"strings"

	"srt.dev/compiler/policy"
)

// A mitmIndex answers policy.MitmProxy.Match without reading every domain:
// explain and diff ask it for every allowed host. ASCII names and IP
// literals (which ParseHostPattern wrote canonically) are found by a map,
// wildcards by the suffixes of the host after each "."; a name with other
// characters, which strings.EqualFold compares with Unicode's case
// folding, is compared with Match's own rule. The answer is Match's
// (TestMitmIndexAgrees).
type mitmIndex struct {
	exact map[string]bool   // lower-cased ASCII names and addresses
	wild  map[string]bool   // lower-cased bases of "*.base"
	rest  *policy.MitmProxy // the names the maps cannot hold
	all   *policy.MitmProxy // every domain, for a host that is not ASCII
}

func newMitmIndex(m *policy.MitmProxy) *mitmIndex {
	x := &mitmIndex{exact: map[string]bool{}, wild: map[string]bool{}, rest: &policy.MitmProxy{}, all: m}
	for _, r := range m.Domains {
		d := r.Host
		if base, ok := strings.CutPrefix(d, "*."); ok {
			x.wild[strings.ToLower(base)] = true
			continue
		}
		if isASCII(d) {
			x.exact[strings.ToLower(d)] = true
			continue
		}
		x.rest.Domains = append(x.rest.Domains, r)
	}
	return x
}

// match is MitmProxy.Match(host).
func (x *mitmIndex) match(host string) bool {
	if !isASCII(host) {
		return x.all.Match(host) // EqualFold folds "\u212a" to "k"
	}
	if _, err := netip.ParseAddr(host); err != nil {
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
