//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/resolve"
)

// BenchmarkLandlock is what the second layer costs the init step of a
// run with one write root and a TMPDIR: building the ruleset (the plan's
// grants, the standard streams) and restricting a thread with it, each
// iteration on a new thread.
func BenchmarkLandlock(b *testing.B) {
	abi := landlockABI()
	if abi <= 0 {
		b.Skip("no Landlock")
	}
	spec := &landlockSpec{scopes: policy.LandlockScopes, write: []string{b.TempDir(), os.TempDir()}}
	for _, g := range policy.LandlockGrants {
		spec.write = append(spec.write, g.Path)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done := make(chan error)
		go func() {
			rs, err := spec.build(abi)
			if err == nil {
				err = rs.enforce("")
			}
			done <- err
			// The goroutine ends locked: Go ends its restricted thread.
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLimitsHost is what the resource limits cost srt on the host
// each run: finding its cgroups, making the run's with the limits set,
// moving a process in, and removing them after it ended.
func BenchmarkLimitsHost(b *testing.B) {
	limits := []resolve.Limit{{Kind: policy.LimitMemory, Value: 4096}, {Kind: policy.LimitProcesses, Value: 4096}, {Kind: policy.LimitCPU, Value: 3600}, {Kind: policy.LimitOpenFiles, Value: 4096}}
	if !planLimits(limits).cg.any() {
		b.Skip("srt can make no cgroup here")
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		child := exec.Command("sleep", "10")
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		lp := planLimits(limits)
		if err := lp.cg.make(limits); err != nil {
			b.Fatal(err)
		}
		if err := lp.cg.join(child.Process.Pid); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		child.Process.Kill()
		child.Wait()
		b.StartTimer()
		if err := lp.cg.remove(); err != nil {
			b.Fatal(err)
		}
	}
}
