//go:build windows

package sandbox

import (
	"context"
	"strings"
	"testing"
)

// TestWindowsRefuses: srt says that the Windows plan is not executed and
// runs nothing. (Compiled here with GOOS=windows; it runs only on Windows.)
func TestWindowsRefuses(t *testing.T) {
	res, err := Run(context.Background(), nil, []string{"cmd", "/c", "echo"}, Options{})
	if res != nil || err == nil || !strings.Contains(err.Error(), "nothing executes it; nothing was run") {
		t.Fatalf("Run = %v, %v; want a refusal", res, err)
	}
	if d := Doctor(""); len(d) != 1 || d[0].OK {
		t.Fatalf("Doctor = %+v, want one failed check", d)
	}
}
