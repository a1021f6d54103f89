package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestInjectCovered pins rule C2 (an inject host must be covered by
// allowedDomains) on every way of covering, read by the searches of
// #covered and, with an allowed entry holding a newline, by comparing
// with every entry: both give the answers written here by hand.
func TestInjectCovered(t *testing.T) {
	inject := []string{
		"api.EXAMPLE.com", // exact, case folded
		"a.wild.org",      // under *.wild.org
		"wild.org",        // not: a wildcard covers strict subdomains
		"*.wild.org",      // the same wildcard
		"*.a.wild.org",    // a wildcard inside it
		"*.org",           // not: wider than *.wild.org (and #Host wants two labels after "*.")
		"10.0.0.1",        // an exact IP literal
		"10.0.0.2",        // not
		"b.c.deep.x.net",  // two levels under *.deep.x.net
		"x.net",           // not
	}
	want := []string{"credentials.envVars[0].injectHosts[2]", "credentials.envVars[0].injectHosts[5]", "credentials.envVars[0].injectHosts[5]", "credentials.envVars[0].injectHosts[7]", "credentials.envVars[0].injectHosts[9]"}
	for _, extra := range [][]string{nil, {"new\nline.example.com"}} {
		allowed := append([]string{"API.example.com:443", "*.Wild.org", "10.0.0.1", "*.deep.x.net"}, extra...)
		doc := map[string]any{
			"network":     map[string]any{"allowedDomains": allowed, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem":  map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{map[string]any{"name": "T", "mode": "mask", "injectHosts": inject}}},
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := (Options{OS: OSPosix}).Load("c.json", data)
		var got []string
		for _, d := range diags {
			got = append(got, d.Path.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("allowed %q: violations at %q, want %q\n%v", allowed, got, want, diags)
		}
	}
}
