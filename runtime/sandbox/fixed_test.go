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
