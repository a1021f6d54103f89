package schema

// DefaultSettingsJSON is what srt runs with when no settings file exists at
// the default path (settings.md §7.2): no network destination is allowed,
// nothing is writable beyond the always-writable paths, and every path is
// readable. It is a settings document like any other and passes the grammar
// (a test checks it).
const DefaultSettingsJSON = `{
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

// DefaultSettingsName is the name diagnostics use for the built-in defaults.
const DefaultSettingsName = "<built-in defaults>"

// Defaults returns the built-in default settings, validated.
func Defaults() *Settings {
	s, diags := Load(DefaultSettingsName, []byte(DefaultSettingsJSON))
	if diags != nil {
		panic("schema: the built-in defaults are invalid: " + diags.Error())
	}
	return s
}
