// Package trust records which compiled plans (srtc compile's artifact
// directories) the user trusts to run on this machine. A plan is code
// the user reviews; a sandboxed run that may write the directory holding
// it (a committed plan in the project) can rewrite it, checksums and all.
// So srt run --plan runs a plan only when its plan.json, which holds the
// checksum of every other file, is one the user trusted here: compiled by
// srtc compile outside a sandbox, or trusted with srt trust after review.
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

// A Record says where and when a plan was trusted (for the user's
// information: the digest alone decides).
type Record struct {
	Digest string    `json:"digest"`
	Path   string    `json:"path"`
	By     string    `json:"by"`
	Time   time.Time `json:"time"`
}

// Trust records the plan of digest (artifact.Digest) as trusted, found at path, by whom
// ("srtc compile", "srt trust").
func Trust(digest, path, by string) error {
	if !valid(digest) {
		return fmt.Errorf("%q is not a plan digest", digest)
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
	b, _ := json.MarshalIndent(Record{Digest: digest, Path: path, By: by, Time: time.Now().UTC()}, "", "  ")
	return private.WriteFile(dir, digest, append(b, '\n'))
}

// Trusted reports whether the plan of digest is trusted here.
func Trusted(digest string) (bool, error) {
	if !valid(digest) {
		return false, nil
	}
	dir, err := Dir()
	if err != nil {
		return false, err
	}
	fi, err := os.Lstat(filepath.Join(dir, digest))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	// Only what srt wrote counts: a regular file in a directory private
	// to the user.
	if !fi.Mode().IsRegular() {
		return false, nil
	}
	if err := private.Check(dir); err != nil {
		return false, err
	}
	return true, nil
}

func valid(digest string) bool {
	if len(digest) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(digest)
	return err == nil
}
