package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"

	"srt.dev/compiler/policy"
)

// Read reads an artifact directory, fsys, named dir in messages: its
// plan.json, checked to be a format this program understands, and the bytes
// of every file the manifest lists, each checked against the checksum it
// records, so that what runs is what was reviewed. A runtime uses these
// bytes, never a second read of the directory, and no file the plan does
// not list. The caller opens the directory (os.DirFS): the package reads
// no file system of its own.
func Read(fsys fs.FS, dir string) (*Manifest, Files, error) {
	name := path.Join(dir, "plan.json")
	b, err := fs.ReadFile(fsys, "plan.json")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		// A plan of another format may not decode as this one: say so.
		var v struct {
			FormatVersion int `json:"formatVersion"`
		}
		if json.Unmarshal(b, &v) != nil || v.FormatVersion == policy.FormatVersion {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		m.FormatVersion = v.FormatVersion
	}
	if m.FormatVersion != policy.FormatVersion {
		return nil, nil, fmt.Errorf("%s: plan format %d, and this srt reads format %d only: compile it again with the srtc of this srt's version (srtc compile -o %s SETTINGS), or run it with the srt that matches the srtc that wrote it", name, m.FormatVersion, policy.FormatVersion, dir)
	}
	if m.Windows != nil {
		return nil, nil, fmt.Errorf("%s was compiled for Windows (its paths were read the Windows way), and srt does not execute Windows plans yet", dir)
	}
	files := Files{}
	for f, want := range m.Files {
		if !fs.ValidPath(f) || f == "plan.json" {
			return nil, nil, fmt.Errorf("%s lists %q, which is not a file of the directory: compile it again", name, f)
		}
		got, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		sum := sha256.Sum256(got)
		if hex.EncodeToString(sum[:]) != want {
			return nil, nil, fmt.Errorf("%s/%s was changed after srtc compiled it: compile it again", dir, f)
		}
		files[f] = got
	}
	m.Digest = Digest(b)
	return &m, files, nil
}
