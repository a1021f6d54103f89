package policy

import (
	"slices"
	"testing"
)

func TestExpandGitHost(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/x/cfg/", "GIT_CONFIG_GLOBAL": "/g/global.conf", "REL": "cfg"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct{ spelling, home, want string }{
		{"~/.gitconfig", "/h", "/h/.gitconfig"},
		{"~/.config/git/config", "/h/", "/h/.config/git/config"},
		{"~/.gitconfig", "", ""},
		{"$XDG_CONFIG_HOME/git/config", "/h", "/x/cfg/git/config"},
		{"$GIT_CONFIG_GLOBAL", "/h", "/g/global.conf"},
		{"$GIT_CONFIG_SYSTEM", "/h", ""},
		{"$REL/git/config", "/h", ""},
		{"/etc/gitconfig", "", "/etc/gitconfig"},
	} {
		if got := ExpandGitHost(c.spelling, c.home, getenv); got != c.want {
			t.Errorf("ExpandGitHost(%q, %q) = %q, want %q", c.spelling, c.home, got, c.want)
		}
	}
	if got := ExpandGitHost("$XDG_CONFIG_HOME/git/config", "/h", nil); got != "" {
		t.Errorf("ExpandGitHost without an environment = %q, want \"\"", got)
	}
}

func TestGitHostHome(t *testing.T) {
	var got []string
	for _, p := range GitHostHome() {
		got = append(got, p.String())
	}
	want := []string{"${HOME}/.config/git/config", "${HOME}/.gitconfig", "${HOME}/.config/git/gitk", "${HOME}/.gitk"}
	if !slices.Equal(got, want) {
		t.Errorf("GitHostHome() = %q, want %q", got, want)
	}
	if got, want := GitHostOperand(), "config=/etc/gitconfig,$GIT_CONFIG_SYSTEM,~/.config/git/config,$XDG_CONFIG_HOME/git/config,~/.gitconfig,$GIT_CONFIG_GLOBAL gitk=~/.config/git/gitk,$XDG_CONFIG_HOME/git/gitk,~/.gitk"; got != want {
		t.Errorf("GitHostOperand() = %q, want %q", got, want)
	}
}
