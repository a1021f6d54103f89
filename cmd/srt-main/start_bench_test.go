//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"srt.dev/emit/artifact"
	"srt.dev/internal/testenv"
)

// BenchmarkStart measures how long "true" takes to run three ways, one after
// the other in each iteration so that they share the machine's load: raw
// bubblewrap (the floor), srt run --plan DIR (a compiled plan: no
// validation, no compilation), and srt --settings FILE with a warm policy
// cache. It reports each in ms/op and the gaps to the floor.
//
//	go test ./cmd/srt-main -run '^$' -bench BenchmarkStart -benchtime 30x
func BenchmarkStart(b *testing.B) {
	paths := testenv.Require(b, "bwrap")
	bw := paths[0]
	dir := b.TempDir()
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	testenv.WriteFile(b, filepath.Join(dir, "s.json"), []byte(settings), 0o644)
	plan := writePlan(b, dir, settings, artifact.Options{})
	env := append(os.Environ(), "HOME="+dir)
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return time.Since(start)
	}
	raw := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "--die-with-parent", "true"}
	// Warm up: the policy cache, the page cache.
	run(srtBin, "--settings", "s.json", "-c", "true")
	run(srtBin, "run", "--plan", plan, "-c", "true")
	run(bw, raw...)
	var tRaw, tPlan, tSettings time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tRaw += run(bw, raw...)
		tPlan += run(srtBin, "run", "--plan", plan, "-c", "true")
		tSettings += run(srtBin, "--settings", "s.json", "-c", "true")
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(tRaw), "raw-ms")
	b.ReportMetric(ms(tPlan), "plan-ms")
	b.ReportMetric(ms(tSettings), "settings-ms")
	b.ReportMetric(ms(tPlan)-ms(tRaw), "plan-minus-raw-ms")
	b.ReportMetric(float64(tPlan)/float64(tRaw), "plan/raw")
	b.ReportMetric(float64(tPlan)/float64(tSettings), "plan/settings")
}

// BenchmarkLayers measures what each layer costs "srt run --plan DIR -c
// true": the plan with @landlock off (the mounts alone), as compiled (with
// Landlock), and with limits (memory, processes, CPU time, open files:
// cgroups where srt may make them, rlimits), interleaved in each
// iteration. It reports each in ms/op and the ratios to the plan without
// the layer.
//
//	go test ./cmd/srt-main -run '^$' -bench BenchmarkLayers -benchtime 100x
func BenchmarkLayers(b *testing.B) {
	testenv.Require(b, "bwrap")
	dir := b.TempDir()
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}`
	withLandlock := writePlan(b, filepath.Join(dir, "landlock"), settings+"}", artifact.Options{})
	without := writePlan(b, filepath.Join(dir, "none"), settings+"}", artifact.Options{})
	args, err := os.ReadFile(filepath.Join(without, "linux", "bwrap.args"))
	if err != nil {
		b.Fatal(err)
	}
	editPlan(b, without, "linux/bwrap.args", []byte(strings.Join(secondLayerOff(strings.Split(string(args), "\n")), "\n")))
	limits := writePlan(b, filepath.Join(dir, "limits"), settings+`, "limits": {"memoryMiB": 4096, "processes": 4096, "cpuSeconds": 3600, "openFiles": 4096}}`, artifact.Options{})
	env := append(os.Environ(), "HOME="+dir)
	run := func(plan string) time.Duration {
		cmd := exec.Command(srtBin, "run", "--plan", plan, "-c", "true")
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", plan, err, out)
		}
		return time.Since(start)
	}
	for _, p := range []string{without, withLandlock, limits} {
		run(p) // warm up
	}
	var tNone, tLandlock, tLimits time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tNone += run(without)
		tLandlock += run(withLandlock)
		tLimits += run(limits)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(tNone), "mounts-only-ms")
	b.ReportMetric(ms(tLandlock), "landlock-ms")
	b.ReportMetric(ms(tLimits), "landlock+limits-ms")
	b.ReportMetric(ms(tLandlock)-ms(tNone), "landlock-cost-ms")
	b.ReportMetric(ms(tLimits)-ms(tLandlock), "limits-cost-ms")
	b.ReportMetric(float64(tLandlock)/float64(tNone), "landlock/none")
	b.ReportMetric(float64(tLimits)/float64(tLandlock), "limits/landlock")
}
