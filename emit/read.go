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
	p, _, err := ReadPlanFiles(dir)
	return p, err
}

// ReadPlanFiles is ReadPlan that also returns the bytes of every file the
// plan lists, as they were checked: a runtime uses these, never a second
// read of the directory, and no file the plan does not list.
func ReadPlanFiles(dir string) (*policy.Policy, Files, error) {
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		return nil, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "plan.json"), err)
	}
	if m.FormatVersion != policy.FormatVersion {
		return nil, nil, fmt.Errorf("%s: format %d, this srt reads format %d: compile it again with a matching srtc", dir, m.FormatVersion, policy.FormatVersion)
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
	return &m.Policy, files, nil
}
