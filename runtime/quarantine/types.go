package quarantine

import "time"

// Spec is what Check needs to know of a run; it is stored with the run's
// record so that the reaper or the next srt can check a run that was
// killed.
type Spec struct {
	// Roots are the directories the command could write (real paths).
	Roots []string `json:"roots"`
	// Since is the run's start as a file-system time (ns since the
	// epoch): names whose inode changed at or after it were written
	// during the run.
	Since int64 `json:"since"`
	// GitConfig is false under filesystem.allowGitConfig: git
	// configuration files are then the command's to write.
	GitConfig bool `json:"gitConfig"`
	// Home is the user's home, for core.hooksPath values in ~/.gitconfig.
	Home string `json:"home"`
}

// A Finding is a protected name written during the run.
type Finding struct {
	Path string
	Why  string
}

// An Item is one quarantined name.
type Item struct {
	ID string `json:"id"`
	// Path is where the name was; Release puts it back there.
	Path string    `json:"path"`
	Why  string    `json:"why"`
	Time time.Time `json:"time"`
}
