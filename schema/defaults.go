package schema

import "srt.dev/schema/builtin"

// DefaultSettingsJSON is what srt runs with when no settings file exists
// at the default path; see builtin.SettingsJSON.
const DefaultSettingsJSON = builtin.SettingsJSON

// DefaultSettingsName is the name diagnostics use for the built-in defaults.
const DefaultSettingsName = builtin.SettingsName

// Defaults returns the built-in default settings, validated.
func Defaults() *Settings {
	s, diags := Load(DefaultSettingsName, []byte(DefaultSettingsJSON))
	if diags != nil {
		panic("schema: the built-in defaults are invalid: " + diags.Error())
	}
	return s
}
