package policy

import (
	"slices"
	"strings"
)

// A HostIndex answers HostList.Match without reading every rule: exact
// names by a map, wildcards by the suffixes of the host, "*" by a short
// list. Generated allow lists run to 180,000 entries, and the proxies ask
// for every connection. The answer is the same rule Match gives: the first
// of the list that matches.
type HostIndex struct {
	list   HostList
	exact  map[string][]int // lower-cased name -> the rules naming it, in list order
	suffix map[string][]int // ".example.com" -> the rules "*.example.com", in list order
	star   []int            // the rules "*", in list order
}

// Index returns the index of l. l must not change afterwards.
func (l HostList) Index() *HostIndex {
	x := &HostIndex{list: l, exact: map[string][]int{}, suffix: map[string][]int{}}
	for i, r := range l {
		h := strings.ToLower(r.Host)
		switch {
		case h == "*":
			x.star = append(x.star, i)
		case strings.HasPrefix(h, "*."):
			x.suffix[h[1:]] = append(x.suffix[h[1:]], i)
		default:
			x.exact[h] = append(x.exact[h], i)
		}
	}
	return x
}

// Match is l.Match(host, port) for the indexed list l.
func (x *HostIndex) Match(host string, port int) (HostRule, bool) {
	best := -1
	x.groups(host, func(idx []int) {
		for _, i := range idx {
			if best >= 0 && i >= best {
				return
			}
			if x.list[i].Match(host, port) {
				best = i
				return
			}
		}
	})
	if best < 0 {
		return HostRule{}, false
	}
	return x.list[best], true
}

// Candidates returns, in list order, the rules that may match host on
// some port: those naming it, the wildcards over it, and "*". Match picks
// the first of them that matches.
func (x *HostIndex) Candidates(host string) []int {
	var out []int
	x.groups(host, func(idx []int) { out = append(out, idx...) })
	slices.Sort(out)
	return out
}

// groups calls f with each group of rules that may match host, each group
// in list order.
func (x *HostIndex) groups(host string, f func([]int)) {
	lower := strings.ToLower(host)
	f(x.exact[lower])
	if len(x.suffix) > 0 && !isIPLiteral(host) {
		for i := 0; i < len(lower); i++ {
			if lower[i] == '.' {
				f(x.suffix[lower[i:]])
			}
		}
	}
	f(x.star)
}
