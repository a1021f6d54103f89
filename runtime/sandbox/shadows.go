package sandbox

import (
	"os"
	"path/filepath"
)

// PathCandidates are the files exec.LookPath(name) tries, in order: name
// in each directory of PATH up to the first that holds it as an
// executable file, that one included, there or not; in every directory
// of PATH when none does. They are what a later run takes from PATH
// whatever this run takes (a path the settings or the environment give
// it, which a later run may not): one a sandbox planted or replaced
// there would be the program that run starts on the host.
func PathCandidates(name string) []string {
	var out []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue // exec.LookPath does not take a relative one
		}
		p := filepath.Join(d, name)
		out = append(out, p)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return out
		}
	}
	return out
}
