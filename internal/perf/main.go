// Command perf measures what srt costs, as ratios against the floor
// measured in the same run: "true" started by raw bubblewrap against
// "srt -c true" and "srt run --plan DIR -- true" (a warm policy cache and
// tree cache), in an empty project and in generated projects of N files
// (a node_modules of N/50 directories of 50 files), and the time each
// step of a run ends (SRT_STEP_TIMES); then what the write watch costs
// (SRT_WRITE_WATCH on against off): "srt -c true", a build that writes
// 10,000 files in its write root with a process per file (cp, as make
// runs a compiler per object), and the same files written by the shell
// itself (no process per file: the watch's worst case).
//
//	go run ./internal/perf                      # sizes 0 and 100000, 20 runs
//	go run ./internal/perf -files 0,100000,1000000 -n 30 -keep /var/tmp/srt-perf
//	go run ./internal/perf -files '' -watch 10  # the write watch only
//
// Runs of the three commands alternate, so that a machine whose speed
// drifts slows each alike; medians are quoted, ratios are taken pair by
// pair. Nothing here is a pass or fail: it prints figures.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20, "runs of each command per size")
	sizes := flag.String("files", "0,100000", "project sizes, in files, comma-separated")
	keep := flag.String("keep", "", "directory to keep generated projects in between calls (default: a temporary one)")
	watchRuns := flag.Int("watch", 5, "runs of each write-watch measure (0: none)")
	flag.Parse()
	if err := run(*n, *sizes, *keep, *watchRuns); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

func run(n int, sizes, keep string, watchRuns int) error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("bubblewrap is needed: %w", err)
	}
	work, err := os.MkdirTemp("", "srt-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if keep == "" {
		keep = filepath.Join(work, "trees")
	}
	bin := filepath.Join(work, "bin")
	for _, c := range []string{"srt", "srt-main", "srtc", "srt-init"} {
		// Built as the README installs them: without cgo.
		build := exec.Command("go", "build", "-o", filepath.Join(bin, c), "srt.dev/cmd/"+c)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", c, err, out)
		}
	}
	fmt.Printf("srt start-up, %d runs per command; medians; ratios pair by pair against raw bubblewrap\n", n)
	fmt.Printf("floor: %s --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --die-with-parent true\n\n", bwrap)
	for _, f := range strings.Split(sizes, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		files, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-files: %q is not a number", f)
		}
		if err := size(n, files, bwrap, bin, work, keep); err != nil {
			return err
		}
	}
	if watchRuns > 0 {
		return watch(watchRuns, bin, work)
	}
	return nil
}

// watch measures the write watch: each command with SRT_WRITE_WATCH on
// and off, alternating, compared pair by pair.
func watch(n int, bin, work string) error {
	home := filepath.Join(work, "home-watch")
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "src.c"), []byte("int main(void) { return 0; }\n"), 0o644)
	settings := filepath.Join(home, "s.json")
	os.WriteFile(settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	env := append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "SRTC="+filepath.Join(bin, "srtc"))
	srt := func(script string) []string {
		return []string{filepath.Join(bin, "srt"), "--settings", settings, "-c", script}
	}
	const files = 10000
	loop := func(body string) string {
		return fmt.Sprintf(`rm -rf out && mkdir out && i=0 && while [ $i -lt %d ]; do %s; i=$((i+1)); done`, files, body)
	}
	fmt.Printf("the write watch: %d runs each, on and off alternating; medians; ratios pair by pair\n", n)
	for _, c := range []struct {
		name string
		argv []string
		runs int
	}{
		{"srt -c true", srt("true"), 4 * n},
		{fmt.Sprintf("build: %d files, a process each (cp)", files), srt(loop(`cp src.c out/f$i.o`)), n},
		{fmt.Sprintf("shell: %d files, no process (worst case)", files), srt(loop(`echo x > out/f$i.o`)), n},
	} {
		var on, off []time.Duration
		var ratios, diffs []float64
		for i := -1; i < c.runs; i++ { // the first pair warms the caches
			var pair [2]time.Duration
			for j, v := range []string{"on", "off"} {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Dir = proj
				cmd.Env = append(env, "SRT_WRITE_WATCH="+v)
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%q: %v\n%s", c.argv, err, out)
				}
				pair[j] = time.Since(start)
			}
			if i < 0 {
				continue
			}
			on, off = append(on, pair[0]), append(off, pair[1])
			ratios = append(ratios, float64(pair[0])/float64(pair[1]))
			diffs = append(diffs, ms(pair[0]-pair[1]))
		}
		fmt.Printf("  %-44s on %9.1f ms  off %9.1f ms  on/off %5.3f×  on−off %+7.2f ms\n", c.name, ms(median(on)), ms(median(off)), medianF(ratios), medianF(diffs))
	}
	return nil
}

// size measures one project size.
func size(n, files int, bwrap, bin, work, keep string) error {
	proj := filepath.Join(keep, "project-"+strconv.Itoa(files))
	if err := generate(proj, files); err != nil {
		return err
	}
	home := filepath.Join(work, "home-"+strconv.Itoa(files))
	for _, d := range []string{home, filepath.Join(home, ".run")} {
		os.MkdirAll(d, 0o700)
	}
	settings := filepath.Join(home, "s.json")
	os.WriteFile(settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	plan := filepath.Join(home, "plan")
	env := append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+filepath.Join(home, ".run"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "SRTC="+filepath.Join(bin, "srtc"))
	steps := filepath.Join(home, "steps.jsonl")
	cmds := []struct {
		name string
		argv []string
	}{
		{"raw bwrap", []string{bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid", "--die-with-parent", "true"}},
		{"srt -c true", []string{filepath.Join(bin, "srt"), "--settings", settings, "-c", "true"}},
		{"srt run --plan", []string{filepath.Join(bin, "srt"), "run", "--plan", plan, "--", "true"}},
	}
	timed := func(argv []string, stepFile string) (time.Duration, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = proj
		cmd.Env = env
		if stepFile != "" {
			cmd.Env = append(cmd.Env, "SRT_STEP_TIMES="+stepFile)
		}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%q: %v\n%s", argv, err, out)
		}
		return time.Since(start), nil
	}
	// Compiled as the user whose runs use it: srtc compile trusts the plan
	// in that user's state, where srt run --plan looks.
	compile := exec.Command(filepath.Join(bin, "srtc"), "compile", "-o", plan, settings)
	compile.Env = env
	if out, err := compile.CombinedOutput(); err != nil {
		return fmt.Errorf("srtc compile: %v\n%s", err, out)
	}
	// Warm: the policy cache, the tree cache, the page cache.
	for _, c := range cmds {
		if _, err := timed(c.argv, ""); err != nil {
			return err
		}
	}
	times := make([][]time.Duration, len(cmds))
	for i := 0; i < n; i++ {
		for j, c := range cmds {
			stepFile := ""
			if j == 1 {
				stepFile = steps
			}
			d, err := timed(c.argv, stepFile)
			if err != nil {
				return err
			}
			times[j] = append(times[j], d)
		}
	}
	fmt.Printf("project of %d files\n", files)
	for j, c := range cmds {
		var ratios []float64
		for i := range times[j] {
			ratios = append(ratios, float64(times[j][i])/float64(times[0][i]))
		}
		fmt.Printf("  %-16s %7.1f ms   %5.2f× raw\n", c.name, ms(median(times[j])), medianF(ratios))
	}
	if err := printSteps(steps); err != nil {
		return err
	}
	return warmStart(n, cmds[0].argv, cmds[1].argv, env, proj, steps)
}

// warmPause is the pause before each command of the paired warm measure.
const warmPause = 300 * time.Millisecond

// warmStart measures srt -c true with SRT_WARM=on: the first command,
// which starts the warm server (after the server of the last run has
// ended), then n commands warmPause apart, each paired with a raw
// bubblewrap run, then n commands back to back.
func warmStart(n int, raw, srt, env []string, proj, steps string) error {
	env = append(slices.Clip(env), "SRT_WARM=on", "SRT_WARM_IDLE=60")
	timed := func(argv, env []string) (time.Duration, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = proj, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%q: %v\n%s", argv, err, out)
		}
		return time.Since(start), nil
	}
	// The server of an earlier measure in this project ends on SIGTERM.
	exec.Command("pkill", "-TERM", "-f", "__srt_warm__ .* -- --settings "+srt[2]).Run()
	time.Sleep(500 * time.Millisecond)
	r0, err := timed(raw, env)
	if err != nil {
		return err
	}
	first, err := timed(srt, env)
	if err != nil {
		return err
	}
	os.Remove(steps)
	var paired, rawTimes, ratios, backToBack []float64
	for range n {
		// An agent's pause between commands: the next sandbox is ready,
		// and the raw run does not share the machine with its making.
		time.Sleep(warmPause)
		r, err := timed(raw, env)
		if err != nil {
			return err
		}
		time.Sleep(warmPause)
		w, err := timed(srt, append(slices.Clip(env), "SRT_STEP_TIMES="+steps))
		if err != nil {
			return err
		}
		rawTimes, paired = append(rawTimes, ms(r)), append(paired, ms(w))
		ratios = append(ratios, float64(w)/float64(r))
	}
	for range n {
		w, err := timed(srt, env)
		if err != nil {
			return err
		}
		backToBack = append(backToBack, ms(w))
	}
	exec.Command("pkill", "-TERM", "-f", "__srt_warm__ .* -- --settings "+srt[2]).Run()
	fmt.Printf("  warm start (SRT_WARM=on):\n")
	fmt.Printf("    first command (starts the server) %7.1f ms   %5.2f× raw (%.1f ms, the run before)\n", ms(first), float64(first)/float64(r0), ms(r0))
	fmt.Printf("    %v apart, paired with raw runs   %7.1f ms   %5.2f× raw (median of pairs; raw %.1f ms)\n", warmPause, medianF(paired), medianF(ratios), medianF(rawTimes))
	fmt.Printf("    back to back                      %7.1f ms   %5.2f× the raw median (each waits for its sandbox)\n", medianF(backToBack), medianF(backToBack)/medianF(rawTimes))
	fmt.Println("  steps in the warm server (ms since the command came):")
	return printSteps(steps)
}

// printSteps prints the median time each step of "srt -c true" ended,
// and its share (from the step before).
func printSteps(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var order []string
	at := map[string][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var steps []struct {
			Step string
			Ms   float64
		}
		if err := json.Unmarshal([]byte(line), &steps); err != nil {
			return err
		}
		for _, s := range steps {
			if _, ok := at[s.Step]; !ok {
				order = append(order, s.Step)
			}
			at[s.Step] = append(at[s.Step], s.Ms)
		}
	}
	fmt.Println("  steps of srt -c true (ms since the process started or the command came to the warm server, median; the step's own time):")
	prev := 0.0
	for _, s := range order {
		m := medianF(at[s])
		fmt.Printf("    %-20s %7.2f  (+%.2f)\n", s, m, m-prev)
		prev = m
	}
	fmt.Println()
	return nil
}

// generate makes a project of n files once (a "done" file marks it).
func generate(dir string, n int) error {
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for d := 0; d < n/50; d++ {
		sub := filepath.Join(dir, "node_modules", "p"+strconv.Itoa(d/40), "d"+strconv.Itoa(d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := 0; f < 50; f++ {
			if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(f)+".js"), nil, 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func medianF(fs []float64) float64 {
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
