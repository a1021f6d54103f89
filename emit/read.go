package emit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"srt.dev/compiler/policy"
)

// ReadPlan reads an artifact directory's plan.json and checks that it is a
// format this program understands and that every file it lists is there
// with the checksum it records, so that what runs is what was reviewed.
func ReadPlan(dir string) (*policy.Policy, error) {
	m, _, err := ReadPlanFiles(dir)
	if err != nil {
		return nil, err
	}
	return &m.Policy, nil
}

// ReadPlanFiles is ReadPlan that returns the whole manifest and the bytes of
// every file it lists, as they were checked: a runtime uses these, never a
// second read of the directory, and no file the plan does not list.
func ReadPlanFiles(dir string) (*Manifest, Files, error) {
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		return nil, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "plan.json"), err)
	}
	if m.FormatVersion != policy.FormatVersion {
		return nil, nil, fmt.Errorf("%s: plan format %d, and this srt reads format %d only: compile it again with the srtc of this srt's version (srtc compile -o %s SETTINGS), or run it with the srt that matches the srtc that wrote it", filepath.Join(dir, "plan.json"), m.FormatVersion, policy.FormatVersion, dir)
	}
	if m.Windows != nil {
		return nil, nil, fmt.Errorf("%s was compiled for Windows (its paths were read the Windows way), and srt does not execute Windows plans yet", dir)
	}
	files := Files{}
	for name, want := range m.Files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		sum := sha256.Sum256(got)
		if hex.EncodeToString(sum[:]) != want {
			return nil, nil, fmt.Errorf("%s/%s was changed after srtc compiled it: compile it again", dir, name)
		}
		files[name] = got
	}
	return &m, files, nil
}
