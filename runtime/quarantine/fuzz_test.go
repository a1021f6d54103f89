//go:build linux

package quarantine

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// fuzzNames are the names a generated tree uses: protected names, the
// names of a git directory, and odd ones.
var fuzzNames = []string{
	".git", ".bashrc", ".vscode", ".claude", "commands", "hooks", "config", "HEAD", "objects", "refs",
	"commondir", "modules", "pre-commit", "x.sample", "a", "b", "node_modules",
	"\x1b[2J\nsrt: fake", " ", "-", "\\", strings.Repeat("n", 255),
}

// fuzzTargets are what generated links point at.
var fuzzTargets = []string{"/", ".", "..", "../..", "/dev/zero", "/proc/self/fd/0", "loop", "a", "../outside", "OUTSIDE", ".git", "/nonexistent"}

// buildTree applies ops to root: each op is three bytes (what, the name,
// a target or a parent), making directories, files, links, FIFOs and
// moves; outside is a directory beside root that nothing may touch. An op
// that fails (its name taken, its parent a file or gone) is skipped, and
// so are its errors: the fuzzer's bytes make any tree they can.
func buildTree(root, outside string, ops []byte) {
	dirs := []string{root}
	// The command is confined to root: it never writes through a link,
	// never blocks on a FIFO.
	create := func(p, text string, mode os.FileMode) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, mode)
		if err != nil {
			return
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			f.WriteString(text)
		}
		f.Close()
	}
	for i := 0; i+2 < len(ops); i += 3 {
		parent := dirs[int(ops[i+2])%len(dirs)]
		if real, err := filepath.EvalSymlinks(parent); err != nil || real != parent {
			continue // replaced by a link meanwhile: outside the command's reach
		}
		if fi, err := os.Lstat(parent); err != nil || !fi.IsDir() {
			continue // replaced by a FIFO or a file meanwhile
		}
		name := fuzzNames[int(ops[i+1])%len(fuzzNames)]
		p := filepath.Join(parent, name)
		switch ops[i] % 8 {
		case 0:
			if os.Mkdir(p, 0o755) == nil && len(dirs) < 64 {
				dirs = append(dirs, p)
			}
		case 1:
			create(p, "x", 0o755)
		case 2:
			create(p, "[core]\n\tfsmonitor = /x\n", 0o644)
		case 3:
			t := fuzzTargets[int(ops[i+2])%len(fuzzTargets)]
			if t == "OUTSIDE" {
				t = outside
			}
			os.Symlink(t, p)
		case 4:
			syscall.Mkfifo(p, 0o644)
		case 5:
			create(p, "ref: refs/heads/main\n", 0o644)
		case 6:
			os.Rename(p, filepath.Join(parent, fuzzNames[int(ops[i+2])%len(fuzzNames)]))
		case 7:
			os.RemoveAll(p)
		}
	}
}

// digest is every name, type and content below dir (links not followed).
func digest(dir string) [32]byte {
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		h.Write([]byte(p))
		if err == nil {
			h.Write([]byte(d.Type().String()))
			if d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				h.Write(b)
			}
		}
		return nil
	})
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// FuzzCheck: over generated trees of links, FIFOs, loops and odd names,
// the snapshot and the check return in bounded time, find only names
// below the root, and moving what they find touches nothing outside it;
// after the move, a second check finds nothing more that can be moved.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{0, 0, 0, 5, 7, 1, 3, 8, 1, 2, 6, 1}, []byte{1, 12, 1, 4, 1, 0})
	f.Add([]byte{0, 0, 0, 0, 11, 1, 3, 9, 2}, []byte{3, 10, 0, 6, 14, 0, 4, 6, 1, 0, 3, 0})
	f.Add([]byte{3, 0, 3, 0, 16, 0}, []byte{1, 19, 1, 0, 0, 0, 2, 6, 1})
	f.Fuzz(func(t *testing.T, before, during []byte) {
		if len(before) > 300 || len(during) > 300 {
			return
		}
		base := t.TempDir()
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		testenv.Mkdir(t, root, 0o755)
		testenv.MkdirAll(t, filepath.Join(outside, ".git/hooks"), 0o755)
		testenv.WriteFile(t, filepath.Join(outside, ".git/hooks/pre-commit"), []byte("outside"), 0o755)
		testenv.WriteFile(t, filepath.Join(outside, ".bashrc"), []byte("outside"), 0o644)
		buildTree(root, outside, before)
		spec := Spec{Roots: []string{root}, GitConfig: true, Home: base}
		deadline := time.Now().Add(20 * time.Second)
		start, _ := Snap(spec, nil, DefaultLimits)
		out := digest(outside)
		buildTree(root, outside, during)
		found := Check(spec, start, DefaultLimits).Found
		if time.Now().After(deadline) {
			t.Fatal("snapshot and check took more than 20 s")
		}
		for _, fd := range found {
			if p := fd.Path(); p != root && !strings.HasPrefix(p, root+"/") {
				t.Fatalf("found %q, outside the root", p)
			}
		}
		store, err := Open(filepath.Join(base, "q"))
		if err != nil {
			t.Fatal(err)
		}
		moved, _, _ := store.Move(found, time.Time{})
		if digest(outside) != out {
			t.Fatal("the check or the move changed something outside the root")
		}
		again := Check(spec, start, DefaultLimits).Found
		if len(again) > len(found)-len(moved) {
			var names []string
			for _, a := range again {
				names = append(names, a.Path())
			}
			t.Fatalf("after moving %d of %d findings, a second check finds %q", len(moved), len(found), names)
		}
	})
}

// FuzzReadSnapshot: a damaged snapshot file is refused or read, never a
// panic or a runaway allocation.
func FuzzReadSnapshot(f *testing.F) {
	root := f.TempDir()
	testenv.MkdirAll(f, filepath.Join(root, ".git/hooks"), 0o755)
	testenv.WriteFile(f, filepath.Join(root, ".git/hooks/pre-commit"), []byte("x"), 0o755)
	testenv.Symlink(f, "t", filepath.Join(root, ".bashrc"))
	s, _ := Snap(Spec{Roots: []string{root}, Watch: []string{filepath.Join(root, "w")}}, nil, DefaultLimits)
	p := filepath.Join(f.TempDir(), "s")
	if err := s.WriteFile(p); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s")
		testenv.WriteFile(t, p, data, 0o600)
		if s, err := ReadSnapshot(p); err == nil {
			q := p + "2"
			if err := s.WriteFile(q); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadSnapshot(q); err != nil {
				t.Fatalf("a snapshot read and written again is refused: %v", err)
			}
		}
	})
}
