// Command gensettings writes a generated settings file (internal/settingsgen)
// to standard output:
//
//	go run ./internal/settingsgen/gensettings -n 1000 > big.json
//	go run ./internal/settingsgen/gensettings -fit 4MiB > largest.json
//	go run ./internal/settingsgen/gensettings -n 1000 -set filesystem.denyRead=4000 > deny.json
//	go run ./internal/settingsgen/gensettings -n 1000 -tests > big.test
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"srt.dev/internal/settingsgen"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the generator: the same seed and sizes give the same bytes")
	n := flag.Int("n", 1000, "allowed domains; the other lists follow settingsgen.Scale(n)")
	fit := flag.String("fit", "", "instead of -n, the largest n whose Scale(n) file is within this size (4MiB, 500KiB, 100000)")
	tests := flag.Bool("tests", false, "write the policy test file of these settings instead")
	var sets []string
	flag.Func("set", "LIST=COUNT: set one list's size (repeatable); lists: "+strings.Join(settingsgen.Names(), ", "), func(s string) error {
		sets = append(sets, s)
		return nil
	})
	flag.Parse()
	sizes := settingsgen.Scale(*n)
	if *fit != "" {
		limit, err := parseSize(*fit)
		if err != nil {
			fail(err)
		}
		n, _ := settingsgen.Fit(*seed, settingsgen.Scale, limit)
		sizes = settingsgen.Scale(n)
	}
	for _, s := range sets {
		name, count, ok := strings.Cut(s, "=")
		l, found := settingsgen.Lookup(name)
		c, err := strconv.Atoi(count)
		if !ok || !found || err != nil || c < 0 {
			fail(fmt.Errorf("-set %q: want LIST=COUNT with a list of: %s", s, strings.Join(settingsgen.Names(), ", ")))
		}
		*l.Of(&sizes) = c
	}
	out := settingsgen.Generate(*seed, sizes)
	if *tests {
		out = settingsgen.GenerateTests(*seed, sizes)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fail(err)
	}
}

// parseSize reads 4MiB, 500KiB or a number of bytes.
func parseSize(s string) (int, error) {
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("-fit %q: want a size such as 4MiB, 500KiB or 100000", s)
	}
	return int(n * float64(mult)), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gensettings:", err)
	os.Exit(2)
}
