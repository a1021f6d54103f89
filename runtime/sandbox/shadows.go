package sandbox

import (
	"os"
	"path/filepath"
)

// PathShadows are the files exec.LookPath(name) would take before found:
// name in each directory of PATH before found's, there or not. A sandbox
// that planted one there would be the program a later run starts on the
// host. nil when found is not name in a directory of PATH (a path given
// explicitly).
func PathShadows(name, found string) []string {
	var out []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue // exec.LookPath does not take a relative one
		}
		p := filepath.Join(d, name)
		if p == found {
			return out
		}
		out = append(out, p)
	}
	return nil
}
