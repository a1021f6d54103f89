// Command growth measures how the time and peak memory of each srtc command
// grow with the size of each list of a settings file
// (docs/performance.md, "review tools: growth"):
//
//	go run ./internal/settingsgen/growth                    # every list, then all together
//	go run ./internal/settingsgen/growth -lists all -base 4000
//	go run ./internal/settingsgen/growth -lists filesystem.denyRead -commands diff,explain
//
// For each row it writes settings files with internal/settingsgen at ×1,
// ×4 and ×16 (one list grown, the others at settingsgen.Scale(base); or
// every list grown together), runs each command as a child process and
// prints its processor time (user and system, from getrusage of the child:
// on a machine shared with other work it varies less than the wall time,
// which is shown for the largest size), its peak resident memory, and the
// ratios between successive sizes. A command that runs longer than
// -timeout (wall time) is stopped and shown as ">T".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"srt.dev/internal/settingsgen"
)

// command is one srtc invocation, run in a directory holding old.json,
// new.json and old.test.
type command struct {
	name string
	args []string
}

var commands = []command{
	{"validate", []string{"validate", "old.json"}},
	{"compile-linux", []string{"compile", "--target", "linux", "-o", "plan-linux", "old.json"}},
	{"compile-macos", []string{"compile", "--target", "macos", "-o", "plan-macos", "old.json"}},
	{"compile-windows", []string{"compile", "--target", "windows", "-o", "plan-windows", "old.json"}},
	{"explain", []string{"explain", "old.json"}},
	{"lint", []string{"lint", "old.json"}},
	{"diff", []string{"diff", "old.json", "new.json"}},
	{"test", []string{"test", "--tests", "old.test", "old.json"}},
}

// A sample is one run of one command.
type sample struct {
	cpu, wall time.Duration
	rssKB     int64
	timeout   bool
}

func main() {
	base := flag.Int("base", 1000, "allowed domains at ×1; the other lists follow settingsgen.Scale(base), and a list grown alone starts at no fewer than base/4 entries")
	lists := flag.String("lists", "", "comma-separated lists to grow alone, and \"all\" for every list together (default: every list, then all)")
	cmds := flag.String("commands", "", "comma-separated commands (default: every one): "+strings.Join(names(), ", "))
	srtc := flag.String("srtc", "", "the srtc binary to measure (default: go build ./cmd/srtc)")
	timeout := flag.Duration("timeout", 60*time.Second, "stop a command after this long")
	runs := flag.Int("runs", 1, "runs of each command at each size; the fastest counts")
	markdown := flag.Bool("markdown", false, "print a Markdown table")
	flag.Parse()

	dir, err := os.MkdirTemp("", "srtc-growth-")
	check(err)
	defer os.RemoveAll(dir)
	bin := *srtc
	if bin == "" {
		bin = filepath.Join(dir, "srtc")
		build := exec.Command("go", "build", "-o", bin, "./cmd/srtc")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}
	rows := settingsgen.Names()
	rows = append(rows, "all")
	if *lists != "" {
		rows = strings.Split(*lists, ",")
	}
	var which []command
	for _, c := range commands {
		if *cmds == "" || slices.Contains(strings.Split(*cmds, ","), c.name) {
			which = append(which, c)
		}
	}
	p := printer{w: os.Stdout, markdown: *markdown}
	p.header()
	for _, row := range rows {
		var sizes [3]settingsgen.Sizes
		for i, k := range []int{1, 4, 16} {
			s, err := grow(*base, row, k)
			check(err)
			sizes[i] = s
		}
		for _, c := range which {
			var got [3]sample
			var bytes [3]int
			for i, s := range sizes {
				work := filepath.Join(dir, "work")
				check(os.RemoveAll(work))
				check(os.MkdirAll(work, 0o755))
				old := settingsgen.Generate(1, s)
				bytes[i] = len(old)
				check(os.WriteFile(filepath.Join(work, "old.json"), old, 0o644))
				check(os.WriteFile(filepath.Join(work, "new.json"), settingsgen.Generate(2, s), 0o644))
				check(os.WriteFile(filepath.Join(work, "old.test"), settingsgen.GenerateTests(1, s), 0o644))
				got[i] = measure(bin, work, c.args, *timeout, *runs)
				if got[i].timeout {
					for j := i + 1; j < 3; j++ {
						got[j] = got[i] // a larger input would take longer still
					}
					break
				}
			}
			p.row(row, c.name, bytes, got)
		}
	}
}

// grow returns the sizes of row at ×k: one list grown from
// max(Scale(base)'s size, base/4), or every list ("all").
func grow(base int, row string, k int) (settingsgen.Sizes, error) {
	s := settingsgen.Scale(base)
	if row == "all" {
		return settingsgen.Scale(base * k), nil
	}
	l, ok := settingsgen.Lookup(row)
	if !ok {
		return s, fmt.Errorf("unknown list %q: use all or one of %s", row, strings.Join(settingsgen.Names(), ", "))
	}
	n := l.Of(&s)
	*n = max(*n, base/4) * k
	return s, nil
}

// measure runs srtc with args in dir runs times and returns the fastest
// run, with the largest peak resident memory of the runs.
func measure(bin, dir string, args []string, timeout time.Duration, runs int) sample {
	best := sample{}
	for r := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		timedOut := ctx.Err() != nil
		cancel()
		s := sample{wall: wall}
		if timedOut {
			s = sample{wall: timeout, timeout: true}
		} else if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				check(err)
			}
			// srtc lint, diff and test exit non-zero on findings: not a
			// failure of the measurement.
		}
		if cmd.ProcessState != nil {
			s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			s.rssKB = peakKB(cmd.ProcessState)
		}
		if r == 0 || s.cpu < best.cpu {
			best.cpu, best.timeout = s.cpu, s.timeout
		}
		if r == 0 || s.wall < best.wall {
			best.wall = s.wall
		}
		best.rssKB = max(best.rssKB, s.rssKB)
		if s.timeout {
			break
		}
	}
	return best
}

type printer struct {
	w        io.Writer
	markdown bool
}

func (p printer) header() {
	cols := []string{"list grown", "command", "file ×1/×4/×16", "cpu s ×1", "×4", "×16", "ratio ×4/×1", "×16/×4", "wall ×16", "peak MB ×1", "×4", "×16", "ratio ×16/×4"}
	if p.markdown {
		fmt.Fprintf(p.w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
		return
	}
	fmt.Fprintf(p.w, format, toAny(cols)...)
}

const format = "%-38s %-16s %-22s %8s %8s %8s %6s %6s %8s %7s %7s %7s %6s\n"

func (p printer) row(list, cmd string, bytes [3]int, s [3]sample) {
	t := func(x sample) string {
		if x.timeout {
			return fmt.Sprintf(">%.0fs", x.wall.Seconds())
		}
		return fmt.Sprintf("%.2f", x.cpu.Seconds())
	}
	wall := fmt.Sprintf("%.2f", s[2].wall.Seconds())
	if s[2].timeout {
		wall = fmt.Sprintf(">%.0f", s[2].wall.Seconds())
	}
	ratio := func(a, b sample) string {
		if a.timeout || b.timeout {
			return "-"
		}
		return fmt.Sprintf("%.1f", b.cpu.Seconds()/a.cpu.Seconds())
	}
	mb := func(x sample) string {
		if x.timeout {
			return "-"
		}
		return fmt.Sprintf("%.0f", float64(x.rssKB)/1024)
	}
	mratio := "-"
	if !s[1].timeout && !s[2].timeout && s[1].rssKB > 0 {
		mratio = fmt.Sprintf("%.1f", float64(s[2].rssKB)/float64(s[1].rssKB))
	}
	file := fmt.Sprintf("%s/%s/%s", kb(bytes[0]), kb(bytes[1]), kb(bytes[2]))
	cols := []string{list, cmd, file, t(s[0]), t(s[1]), t(s[2]), ratio(s[0], s[1]), ratio(s[1], s[2]), wall, mb(s[0]), mb(s[1]), mb(s[2]), mratio}
	if p.markdown {
		fmt.Fprintf(p.w, "| %s |\n", strings.Join(cols, " | "))
		return
	}
	fmt.Fprintf(p.w, format, toAny(cols)...)
}

func kb(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%dK", (n+512)>>10)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func names() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "growth:", err)
		os.Exit(2)
	}
}
