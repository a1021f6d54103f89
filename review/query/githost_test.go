package query

import "testing"

// TestGitHost: git's configuration outside the repository in the home
// directory is write-protected on Linux and macOS whatever the write
// roots say (mandatory), names beside it are not, and nothing is with the
// file-system policy disabled; Windows has no mandatory denies.
func TestGitHost(t *testing.T) {
	for _, c := range []struct {
		fs    string
		path  string
		t     Target
		allow bool
		rule  string
	}{
		{`"allowWrite": ["~"]`, "~/.config/git/config", Linux, false, "mandatory"},
		{`"allowWrite": ["~"]`, "~/.config/git/config", MacOS, false, "mandatory"},
		{`"allowWrite": ["~"]`, "~/.config/git/config", Windows, true, "filesystem.allowWrite[0]"},
		{`"allowWrite": ["~"]`, "~/.gitconfig", Linux, false, "mandatory"},
		{`"allowWrite": ["~"]`, "~/.gitk", Linux, false, "mandatory"},
		{`"allowWrite": ["~/.config"]`, "~/.config/git/gitk", MacOS, false, "mandatory"},
		{`"allowWrite": ["~"]`, "~/.config/git/ignore", Linux, true, "filesystem.allowWrite[0]"},
		{`"allowWrite": ["~"]`, "~/proj/.config/git/config", Linux, true, "filesystem.allowWrite[0]"},
		{`"allowWrite": ["."]`, "~/.config/git/config", Linux, false, "default"},
		{`"disabled": true, "allowWrite": []`, "~/.config/git/config", Linux, true, "filesystem.disabled"},
	} {
		src := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "denyWrite": [], `+c.fs+`}}`)
		e := src.Evaluator("/home/me", "/home/me/proj")
		d := e.Write(e.Path(c.path), c.t)
		if d.Allow != c.allow || d.Rule.Key != c.rule {
			t.Errorf("%s: write %s on %s = %v by %s (%s), want %v by %s", c.fs, c.path, c.t, d.Allow, d.Rule.Key, d.Why, c.allow, c.rule)
		}
	}
}
