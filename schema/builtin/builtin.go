// Package builtin holds the settings facts that both srtc and srt need,
// without the grammar: srt does not link CUE, and these must not be copied.
package builtin

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
