package wfp_test

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"srt.dev/emit/wfp"
)

// The model's WFP part: the filters of the plan's install phase decide a
// connect made by a socket of the sandbox account. Among the filters of
// the connect's layer (ALE_AUTH_CONNECT_V4 or _V6) whose conditions all
// match, the one of highest weight decides; with none, the connect is
// permitted (the sublayer's default for traffic nothing fences).

// Connect answers whether a socket of the sandbox account may connect to
// ip:port, from the plan's WFP filters.
func (m *model) Connect(ip net.IP, port int) (bool, error) {
	layer := "FWPM_LAYER_ALE_AUTH_CONNECT_V6"
	if ip.To4() != nil {
		layer = "FWPM_LAYER_ALE_AUTH_CONNECT_V4"
	}
	best, bestWeight := "", uint64(0)
	for _, f := range m.filters {
		if f.Layer != layer {
			continue
		}
		w, err := strconv.ParseUint(strings.TrimPrefix(f.Weight, "0x"), 16, 64)
		if err != nil {
			return false, fmt.Errorf("filter %s: weight %q", f.DisplayName, f.Weight)
		}
		ok, err := matchFilter(f, ip, port)
		if err != nil {
			return false, err
		}
		if ok && (best == "" || w > bestWeight) {
			best, bestWeight = f.Action, w
		}
	}
	switch best {
	case "", "FWP_ACTION_PERMIT":
		return true, nil
	case "FWP_ACTION_BLOCK":
		return false, nil
	}
	return false, fmt.Errorf("filter action %q is not in the model", best)
}

// matchFilter reports whether every condition of f matches a connect of
// the sandbox account to ip:port.
func matchFilter(f wfp.Filter, ip net.IP, port int) (bool, error) {
	for _, c := range f.Conditions {
		v := strings.Fields(c.Value)
		switch c.Field {
		case "FWPM_CONDITION_IP_REMOTE_ADDRESS":
			_, n, err := net.ParseCIDR(v[0])
			if err != nil {
				if a := net.ParseIP(v[0]); a != nil {
					n = &net.IPNet{IP: a, Mask: net.CIDRMask(len(a)*8, len(a)*8)}
				} else {
					return false, fmt.Errorf("filter %s: address %q", f.DisplayName, c.Value)
				}
			}
			if !n.Contains(ip) {
				return false, nil
			}
		case "FWPM_CONDITION_IP_REMOTE_PORT":
			var r [2]int
			if err := json.Unmarshal([]byte(strings.Join(v[:2], "")), &r); err != nil || c.Match != "FWP_MATCH_RANGE" {
				return false, fmt.Errorf("filter %s: port condition %q %q", f.DisplayName, c.Match, c.Value)
			}
			if port < r[0] || port > r[1] {
				return false, nil
			}
		case "FWPM_CONDITION_ALE_USER_ID":
			// The descriptor grants "match" to sid:user: every socket the
			// sandbox account creates.
			if !strings.Contains(c.Value, ";;;sid:user)") {
				return false, nil
			}
		default:
			return false, fmt.Errorf("filter %s: condition %s is not in the model", f.DisplayName, c.Field)
		}
	}
	return true, nil
}
