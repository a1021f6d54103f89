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

// TestCoveredEmptyHost pins #covered's answer for "": covered only by an
// entry "", not by the "\n\n" that lies between two entries of the
// search text. An empty inject host is a grammar error; it is in
// excludeDomains (rule C4) only where excludeDomains lists "".
func TestCoveredEmptyHost(t *testing.T) {
	const inject = "credentials.envVars[0].injectHosts[0]"
	for _, c := range []struct {
		excluded []string
		want     []string // the paths of the diagnostics, in order
	}{
		// The grammar, and C2: allowedDomains does not cover "".
		{[]string{"a.example.com", "b.example.com"}, []string{inject, inject}},
		{[]string{"a.example.com", "b.example.com", "c.example.com"}, []string{inject, inject}},
		// The same, C4, and the grammar of the excluded "".
		{[]string{"a.example.com", ""}, []string{inject, inject, inject, "network.tlsTerminate.excludeDomains[1]"}},
		{[]string{"", "a.example.com"}, []string{inject, inject, inject, "network.tlsTerminate.excludeDomains[0]"}},
		{[]string{""}, []string{inject, inject, inject, "network.tlsTerminate.excludeDomains[0]"}},
	} {
		doc := map[string]any{
			"network":     map[string]any{"allowedDomains": []string{"*.example.com", "x.org"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{"excludeDomains": c.excluded}},
			"filesystem":  map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{map[string]any{"name": "T", "mode": "mask", "injectHosts": []string{""}}}},
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, slow := range []bool{false, true} {
			_, diags := (Options{OS: OSPosix, slow: slow}).Load("c.json", data)
			var got []string
			for _, d := range diags {
				got = append(got, d.Path.String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("excludeDomains %q (grammar alone: %v): diagnostics at %q, want %q\n%v", c.excluded, slow, got, c.want, diags)
			}
		}
	}
}
