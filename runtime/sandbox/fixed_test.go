//go:build linux

package sandbox

import "testing"

// TestFixedPartsMoveWithoutChanging: the same switches written at other
// positions (a control line is one line) are no change.
func TestFixedPartsMoveWithoutChanging(t *testing.T) {
	a := compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": [], "allowLocalBinding": true},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"allowPty": true}`)
	b := compileFull(t, `{"allowPty": true, "network": {"allowLocalBinding": true, "allowedDomains": ["example.com"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	if len(a.Switches) == 0 || a.Switches["allowPty"] == b.Switches["allowPty"] {
		t.Fatalf("the test needs switches at different positions: %v %v", a.Switches, b.Switches)
	}
	if FixedPartsDiffer(a, b) {
		t.Error("switches at other positions counted as a change of the fixed parts")
	}
	c := compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": [], "allowLocalBinding": true}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	if !FixedPartsDiffer(a, c) {
		t.Error("allowPty dropped was not noticed")
	}
}

// TestFixedPartsSigV4: credentials.sigv4 follows an update; the masked
// variables, their inject hosts and the AWS pairs do not.
func TestFixedPartsSigV4(t *testing.T) {
	doc := func(cred string) string {
		return `{"network": {"allowedDomains": ["s3.amazonaws.com", "example.com"], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "credentials": ` + cred + `}`
	}
	const vars = `"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask"}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}]`
	start := compileFull(t, doc(`{`+vars+`}`))
	for _, tc := range []struct {
		name, cred string
		fixed      bool
	}{
		{"sigv4 set", `{` + vars + `, "sigv4": {"presigned": "passthrough", "streaming": "deny"}}`, false},
		{"secret no longer masked", `{"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask"}]}`, true},
		{"inject hosts narrowed", `{"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask", "injectHosts": ["s3.amazonaws.com"]}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}]}`, true},
		{"pair named explicitly", `{"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask"}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}, {"name": "X", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "AWS_ACCESS_KEY_ID", "secretAccessKeyVar": "X"}]}`, true},
	} {
		if got := FixedPartsDiffer(start, compileFull(t, doc(tc.cred))); got != tc.fixed {
			t.Errorf("%s: FixedPartsDiffer = %v, want %v", tc.name, got, tc.fixed)
		}
	}
}
