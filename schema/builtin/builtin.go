// Package builtin holds the settings facts that both srtc and srt need,
// without the grammar: srt does not link CUE, and these must not be copied.
package builtin

import "fmt"

// SettingsJSON is what srt runs with when no settings file exists at the
// default path (docs/reference.md#settings-loading): no network destination is allowed,
// nothing is writable beyond the always-writable paths, and every path is
// readable. package schema checks that it passes the grammar.
const SettingsJSON = `{
  "network": {
    "allowedDomains": [],
    "deniedDomains": []
  },
  "filesystem": {
    "denyRead": [],
    "allowRead": [],
    "allowWrite": [],
    "denyWrite": []
  }
}
`

// SettingsName is the name diagnostics use for the built-in defaults.
const SettingsName = "<built-in defaults>"

// MaxFileSize is the largest settings file accepted. Real settings files
// are a few kilobytes; the limit keeps a stray multi-gigabyte file from
// exhausting memory.
const MaxFileSize = 4 << 20

// TooLarge says that a settings file of size bytes is over MaxFileSize:
// the one wording srt and srtc use, after the file's name.
func TooLarge(size int64) string {
	return fmt.Sprintf("the file is %s; a settings file may be at most %s", ByteSize(size), ByteSize(MaxFileSize))
}

// ByteSize renders n bytes for a message: "4.0 MiB", "12.5 KiB", "80 bytes".
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
