package quarantine

import (
	"math"
	"os"
	"path/filepath"
	"time"
)

// Spec is what the check needs to know of a run; it is stored with the
// run's record so that the reaper or the next srt can check a run that
// was killed.
type Spec struct {
	// Roots are the directories the command could write (real paths).
	Roots []string `json:"roots"`
	// GitConfig is false under filesystem.allowGitConfig: git
	// configuration files are then the command's to write.
	GitConfig bool `json:"gitConfig"`
	// Home is the user's home, for core.hooksPath values in ~/.gitconfig.
	Home string `json:"home"`
	// Watch are paths that do not exist when the run starts and must not
	// be created by it (srt's own files, such as the default settings
	// file): one that exists after the run is quarantined.
	Watch []string `json:"watch,omitempty"`
	// GitWatch are git's files outside the repository that the command
	// could change, and the links on the way to them, each a real
	// directory joined with a name (resolve.Result.GitWatch): one new or
	// changed after the run is quarantined, and so is a link put on the
	// way to one.
	GitWatch []string `json:"gitWatch,omitempty"`
	// Snapshot is the file holding what Snap recorded before the command
	// started ("" until it is written: a run without one never started
	// its command, and has nothing to check).
	Snapshot string `json:"snapshot,omitempty"`
}

// An Item is one quarantined name.
type Item struct {
	ID string `json:"id"`
	// Path is where the name was; Release puts it back there. Root is
	// the write root it was found in: Release reaches Path from it
	// without following a link.
	Path string    `json:"path"`
	Root string    `json:"root,omitempty"`
	Why  string    `json:"why"`
	Time time.Time `json:"time"`
	// Kind is what was moved: "file", "link", "directory", or "special"
	// (a FIFO, socket or device: removed, it holds no content).
	Kind string `json:"kind,omitempty"`
	// InPlace is set when the item could not leave its file system (a
	// directory): it was renamed beside where it was, to this name.
	InPlace string `json:"inPlace,omitempty"`
}

// DefaultDir is $XDG_STATE_HOME/srt/quarantine, or
// ~/.local/state/srt/quarantine.
func DefaultDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "srt", "quarantine"), nil
}

// Limits bound one walk of the write roots. A walk that reaches one stops
// there and says what it could not vouch for: at the start the run does
// not start (what was not recorded could not be checked), after the run
// the check is incomplete (Report.Unchecked). A directory the run made
// that the walk did not reach is moved away whole.
type Limits struct {
	// Entries is the most directory entries one walk reads.
	Entries int64
	// DirEntries is the most names one directory may hold.
	DirEntries int
	// Time is the longest one walk may take; 0 for no limit.
	Time time.Duration
}

// DefaultLimits are far above a real project: a monorepo with its
// dependencies installed holds a few million entries, and the walk after
// the run reads only the directories that changed.
var DefaultLimits = Limits{Entries: 20_000_000, DirEntries: 10_000_000, Time: 2 * time.Minute}

// NoLimits bound nothing but the depth (srt quarantine check: the user
// asked for the whole tree, and waits for it).
var NoLimits = Limits{Entries: math.MaxInt64, DirEntries: math.MaxInt}
