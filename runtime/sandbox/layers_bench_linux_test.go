//go:build linux

package sandbox

import (
	"os/exec"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/resolve"
)

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
