//go:build linux

package initstep

import (
	"os"
	"testing"

	"srt.dev/compiler/policy"
)

// BenchmarkLandlock is what the second layer costs the init step of a
// run with one write root and a TMPDIR: building the ruleset (the plan's
// grants, the standard streams) and restricting a thread with it, each
// iteration on a new thread.
func BenchmarkLandlock(b *testing.B) {
	abi := ABI()
	if abi <= 0 {
		b.Skip("no Landlock")
	}
	spec := &LandlockSpec{Scopes: policy.LandlockScopes, Write: []string{b.TempDir(), os.TempDir()}}
	for _, g := range policy.LandlockGrants {
		spec.Write = append(spec.Write, g.Path)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done := make(chan error)
		go func() {
			rs, err := spec.Build(abi)
			if err == nil {
				err = rs.Enforce("")
			}
			done <- err
			// The goroutine ends locked: Go ends its restricted thread.
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
