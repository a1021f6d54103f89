package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"srt.dev/compiler/policy"
)

// glob expands an srt pattern against the disk now (docs/reference.md#linux-globs).
// root, when not "", is a directory taken as it is (the host's home or
// working directory, whose name may hold *, ? or [) and pattern is
// relative to it; otherwise pattern is absolute. The walk starts at the
// pattern's literal directory; a pattern whose first component is a
// wildcard cannot be expanded without walking the whole file system, and
// is refused rather than left to hide nothing.
func glob(root, pattern string) ([]string, error) {
	ds := policy.Doublestar(pattern)
	base, rest := doublestar.SplitPattern(ds)
	base = unescape(base)
	if root != "" {
		base = filepath.Join(root, base)
	}
	if base == "/" || base == "" || base == "." {
		return nil, errors.New("a pattern must start with a literal directory (such as ~/ or ./) to be enforced on Linux")
	}
	if _, err := os.Stat(base); err != nil {
		return nil, nil // nothing there to match
	}
	var out []string
	err := doublestar.GlobWalk(os.DirFS(base), rest, func(p string, d os.DirEntry) error {
		out = append(out, filepath.Join(base, filepath.FromSlash(p)))
		return nil
	})
	if err != nil && !errors.Is(err, doublestar.ErrBadPattern) {
		return nil, err
	}
	if errors.Is(err, doublestar.ErrBadPattern) {
		return nil, errors.New("not a valid pattern")
	}
	sort.Strings(out)
	return out, nil
}

// unescape removes doublestar's escapes from a literal directory.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
