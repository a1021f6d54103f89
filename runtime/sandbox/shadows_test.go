package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPathCandidates(t *testing.T) {
	dir := t.TempDir()
	local, usr, bin, none := filepath.Join(dir, "local"), filepath.Join(dir, "usr"), filepath.Join(dir, "bin"), filepath.Join(dir, "none")
	for _, d := range []string{local, usr, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, mode os.FileMode) {
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(usr, "bwrap"), 0o644) // not executable: LookPath passes it
	write(filepath.Join(bin, "bwrap"), 0o755)
	if err := os.Mkdir(filepath.Join(local, "bwrap"), 0o755); err != nil { // a directory: passed too
		t.Fatal(err)
	}
	t.Setenv("PATH", none+":relative::"+local+":"+usr+":"+bin+":/usr/bin")
	want := []string{filepath.Join(none, "bwrap"), filepath.Join(local, "bwrap"), filepath.Join(usr, "bwrap"), filepath.Join(bin, "bwrap")}
	if got := PathCandidates("bwrap"); !slices.Equal(got, want) {
		t.Errorf("PathCandidates(bwrap) = %q, want %q", got, want)
	}
	want = []string{filepath.Join(none, "srtc"), filepath.Join(local, "srtc"), filepath.Join(usr, "srtc"), filepath.Join(bin, "srtc"), "/usr/bin/srtc"}
	if got := PathCandidates("srtc"); !slices.Equal(got, want) {
		t.Errorf("PathCandidates(srtc), on PATH nowhere, = %q, want %q", got, want)
	}
}
