package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, two levels up from this package.
const root = "../.."

// anchors returns the anchors of a Markdown file: explicit <a id="…">
// and the ones GitHub derives from headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		out[slug(strings.TrimLeft(line, "# "))] = true
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces as '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sources returns the Go and CUE files of the module.
func sources(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// This package names the patterns it looks for.
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "doccheck") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".cue") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCitations: what the code cites of the reference behaviour is in
// docs/reference.md, under the anchor it names.
func TestCitations(t *testing.T) {
	have := anchors(t, filepath.Join(root, "docs", "reference.md"))
	cite := regexp.MustCompile(`docs/reference\.md#([a-z0-9-]+)`)
	// A section sign is a citation of a document; only RFCs are cited so.
	section := regexp.MustCompile(`§`)
	rfc := regexp.MustCompile(`RFC \d+(?:[\s,/]*(?:and\s+)?§[\d.]+)*[\s,/]*(?:and\s*)?$`)
	for _, f := range sources(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			if !have[m[1]] {
				t.Errorf("%s cites docs/reference.md#%s, which does not exist", f, m[1])
			}
		}
		for _, loc := range section.FindAllStringIndex(text, -1) {
			before := text[max(0, loc[0]-40):loc[0]]
			if !rfc.MatchString(strings.ReplaceAll(before, "\n", " ")) {
				line := strings.Count(text[:loc[0]], "\n") + 1
				t.Errorf("%s:%d: a § citation of a document outside the repository; cite docs/reference.md#anchor", f, line)
			}
		}
	}
}

// TestLinks: every relative link of README.md and docs/*.md names a file
// that exists and, with a #fragment, one of its anchors.
func TestLinks(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			rel, _ := filepath.Rel(root, path)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s (%s), which does not exist", page, target, filepath.ToSlash(rel))
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
				t.Errorf("%s links to %s: no such anchor", page, target)
			}
		}
	}
}
