// Package trust records which compiled plan (srtc compile's artifact
// directory) the user trusts to run in each plan directory on this
// machine. A plan is code the user reviews; a sandboxed run that may write
// the directory holding it (a committed plan in the project) can rewrite
// it, checksums and all, or put back another plan: an older, wider
// version of the same directory, or a plan trusted in another directory.
// So srt run --plan runs a plan only when its plan.json, which holds the
// checksum of every other file, is the one plan the user trusted in that
// very directory: compiled there by srtc compile outside a sandbox, or
// trusted there with srt trust after review. Each of these replaces the
// directory's record; nothing trusted earlier, there or elsewhere, counts.
//
// A directory is named by its absolute, clean path as srt reaches it
// (PlanDir), with no symbolic link on the way: a plan moved or copied to
// another directory must be trusted there again.
//
// The record is a directory of srt's own state, read-only in every
// sandbox (policy.StateTrust): no sandbox can trust a plan.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"srt.dev/runtime/nofollow"
	"srt.dev/runtime/private"
)

// Dir is where the trusted plans are recorded:
// $XDG_STATE_HOME/srt/trusted-plans, or ~/.local/state/srt/trusted-plans.
func Dir() (string, error) {
	dir, _, err := dir()
	return dir, err
}

// dir is Dir, and the directory that must exist already for srt to make
// it (the home directory, when there is no XDG_STATE_HOME: srt makes no
// home directory).
func dir() (dir, base string, err error) {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" {
		return filepath.Join(s, "srt", "trusted-plans"), "", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", "", err
	}
	return filepath.Join(home, ".local", "state", "srt", "trusted-plans"), home, nil
}

// A Record is the plan trusted in one plan directory: Path, the
// directory (PlanDir), and Digest, its plan.json's (artifact.Digest).
// By and Time say who trusted it and when, for the user's information.
type Record struct {
	Path   string    `json:"path"`
	Digest string    `json:"digest"`
	By     string    `json:"by"`
	Time   time.Time `json:"time"`
}

// PlanDir is the name of the plan directory dir in the record: its
// absolute, clean path, the working directory taken as the process has
// it. A path with a symbolic link on the way is refused, as a
// *nofollow.LinkError: the record names a directory, never what a link
// (which a sandboxed run may have planted) leads to.
func PlanDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if le := nofollow.FirstLink(abs); le != nil {
		return "", le
	}
	return abs, nil
}

// recordName is the file of the record of the plan directory path: a
// digest of the path, so that any path names one file. Records of the
// earlier form (one file per trusted plan, named by its digest, for any
// directory) have names without the prefix.
func recordName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return "dir-" + hex.EncodeToString(sum[:])
}

// checkPath refuses a plan directory that is not an absolute, clean path
// (PlanDir gives one).
func checkPath(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%q is not an absolute, clean path of a plan directory", path)
	}
	return nil
}

// Trust records the plan of digest (artifact.Digest) as the one plan
// trusted in the plan directory path (PlanDir), replacing whatever was
// trusted there, by whom ("srtc compile", "srt trust"). The record is
// replaced atomically: a reader sees the old plan or the new one.
func Trust(path, digest, by string) error {
	if !valid(digest) {
		return fmt.Errorf("%q is not a plan digest", digest)
	}
	if err := checkPath(path); err != nil {
		return err
	}
	dir, home, err := dir()
	if err != nil {
		return err
	}
	if home != "" {
		if _, err := os.Stat(home); err != nil {
			return fmt.Errorf("the home directory: %w", err)
		}
	}
	b, _ := json.MarshalIndent(Record{Path: path, Digest: digest, By: by, Time: time.Now().UTC()}, "", "  ")
	return private.WriteFile(dir, recordName(path), append(b, '\n'))
}

// Lookup returns the record of the plan directory path (PlanDir), or nil
// when no plan is trusted there.
func Lookup(path string) (*Record, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	b, err := readRecord(dir, recordName(path))
	if b == nil || err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the record of %s in %s: %w", path, dir, err)
	}
	if r.Path != path || !valid(r.Digest) {
		return nil, fmt.Errorf("the record of %s in %s names another directory (%q) or no plan", path, dir, r.Path)
	}
	return &r, nil
}

// Trusted reports whether the plan of digest is the one trusted in the
// plan directory path (PlanDir).
func Trusted(path, digest string) (bool, error) {
	if !valid(digest) {
		return false, nil
	}
	r, err := Lookup(path)
	if r == nil || err != nil {
		return false, err
	}
	return r.Digest == digest, nil
}

// TrustedBefore reports whether the record of the earlier form, which
// trusted a plan wherever it was found and is no longer read, holds the
// plan of digest as found in path: what the user is told, never trust.
func TrustedBefore(path, digest string) bool {
	dir, err := Dir()
	if err != nil || !valid(digest) {
		return false
	}
	b, err := readRecord(dir, digest)
	if b == nil || err != nil {
		return false
	}
	var r Record
	return json.Unmarshal(b, &r) == nil && r.Digest == digest && r.Path == path
}

// readRecord reads dir/name, nil when there is none. Only what srt wrote
// counts: a regular file in a directory private to the user.
func readRecord(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a file srt wrote: refusing to trust what it says", p)
	}
	if err := private.Check(dir); err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func valid(digest string) bool {
	if len(digest) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(digest)
	return err == nil
}
