package seatbelt

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// The sandbox-exec parameters a profile reads with (param "NAME"); the
// runtime passes each with -D NAME=VALUE. They keep host facts out of the
// profile, so the same settings give the same bytes on every machine.
const (
	ParamHome             = "HOME"               // the home directory, as the kernel spells it (no symlinks)
	ParamCwd              = "CWD"                // the working directory, likewise
	ParamHomeRegex        = "HOME_REGEX"         // HOME with regex metacharacters escaped
	ParamCwdRegex         = "CWD_REGEX"          // CWD likewise
	ParamHomeParentsRegex = "HOME_PARENTS_REGEX" // matches exactly HOME's ancestors other than "/"
	ParamCwdParentsRegex  = "CWD_PARENTS_REGEX"  // CWD's likewise
	ParamHTTPPort         = "HTTP_PROXY_PORT"    // srt's HTTP proxy on 127.0.0.1
	ParamSOCKSPort        = "SOCKS_PROXY_PORT"   // srt's SOCKS5 proxy on 127.0.0.1
	ParamLogTag           = "LOG_TAG"            // the violation attribution tag (docs/reference.md#macos-log-tag)
)

// Host is what the runtime knows about one run. HOME and CWD must be
// absolute and free of symlinks (Seatbelt matches the path the kernel
// resolved, docs/reference.md#macos-pitfalls).
type Host struct {
	Home, Cwd           string
	HTTPPort, SOCKSPort int
	LogTag              string
}

// Check reports host facts a profile cannot be run with. HOME and CWD
// must be absolute, clean (no "//", ".", ".." or trailing "/") and not "/":
// every rule under them is the parameter followed by "/name", so "/" or
// "/w/" would give "//name", a path the kernel never checks, and those
// rules (the mandatory write denies, ./.env, ~/.ssh) would match nothing.
// Found by the agreement test with compiler/query (CWD "/").
func (h Host) Check() error {
	for _, d := range []struct{ name, dir string }{{ParamHome, h.Home}, {ParamCwd, h.Cwd}} {
		switch {
		case d.dir == "/":
			return fmt.Errorf("%s is \"/\": the profile names paths under it as \"/\" + \"/name\", which matches nothing; run from (or set HOME to) another directory", d.name)
		case !strings.HasPrefix(d.dir, "/") || path.Clean(d.dir) != d.dir:
			return fmt.Errorf("%s (%q) must be an absolute, clean path", d.name, d.dir)
		}
	}
	return nil
}

// Defines returns the NAME=VALUE pairs for sandbox-exec -D, sorted by name.
func (h Host) Defines() []string {
	m := map[string]string{
		ParamHome:             h.Home,
		ParamCwd:              h.Cwd,
		ParamHomeRegex:        policy.RegexEscape(h.Home),
		ParamCwdRegex:         policy.RegexEscape(h.Cwd),
		ParamHomeParentsRegex: parentsRegex(h.Home),
		ParamCwdParentsRegex:  parentsRegex(h.Cwd),
		ParamHTTPPort:         strconv.Itoa(h.HTTPPort),
		ParamSOCKSPort:        strconv.Itoa(h.SOCKSPort),
		ParamLogTag:           h.LogTag,
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// parentsRegex matches exactly the ancestors of dir other than "/"; for a
// directory directly under "/" (or "/" itself) it matches nothing (no path
// is empty).
func parentsRegex(dir string) string {
	var alts []string
	for a := parent(dir); a != "/" && a != ""; a = parent(a) {
		alts = append([]string{policy.RegexEscape(a)}, alts...)
	}
	if len(alts) == 0 {
		return "^$"
	}
	return "^(" + strings.Join(alts, "|") + ")$"
}

// parent is the directory above p ("/" for "/x", "" for "/").
func parent(p string) string {
	if p == "/" || p == "" {
		return ""
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
