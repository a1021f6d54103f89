package resolve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchTree makes 100,000 files: 10 × 10 × 10 directories of 100 files,
// with a dangerous name in some of them.
func benchTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	for i := range 10 {
		for j := range 10 {
			for k := range 10 {
				dir := filepath.Join(root, fmt.Sprint("d", i), fmt.Sprint("e", j), fmt.Sprint("f", k))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				for f := range 100 {
					name := fmt.Sprint("file", f, ".txt")
					if f == 0 && k == 0 {
						name = ".bashrc"
					}
					if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	return root
}

// BenchmarkScan is the mandatory-deny scan with depth 10 (every file) over
// 100,000 files; compare with BenchmarkRipgrepFiles.
func BenchmarkScan(b *testing.B) {
	root := benchTree(b)
	r := &resolver{h: Host{Home: root, Cwd: root}, res: &Result{}}
	b.ResetTimer()
	for b.Loop() {
		found, err := r.scan("depth=10 git=protect-config")
		if err != nil || len(found) != 100 {
			b.Fatalf("found %d, %v", len(found), err)
		}
	}
}

// BenchmarkRipgrepFiles is what the reference runs for the same scan:
// rg --files over the whole tree (skipped without ripgrep).
func BenchmarkRipgrepFiles(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep not installed")
	}
	root := benchTree(b)
	b.ResetTimer()
	for b.Loop() {
		out, err := exec.Command(rg, "--files", "--hidden", "--no-ignore", "--no-config", "--max-depth", "11",
			"--iglob", ".bashrc", "--iglob", "**/.git/hooks/**", "-g", "!**/node_modules/**", root).Output()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}
