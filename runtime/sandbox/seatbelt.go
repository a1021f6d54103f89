package sandbox

// The pure part of the macOS runtime: the sandbox-exec command line, the
// command's environment and the violation tag. It is untagged so that it
// is tested on Linux; sandbox_darwin.go runs it. None of it has run on a
// real Mac yet.

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/runtime/violations"
)

// SandboxExec is macOS's Seatbelt front end.
const SandboxExec = "/usr/bin/sandbox-exec"

// seatbeltArgv is the command line that runs argv under profile, the
// profile of p: sandbox-exec -p PROFILE -D NAME=VALUE... argv. The profile
// is passed inline, as the reference does (no file to race on); the host
// facts are parameters (seatbelt.HostDefines: the directories, the ports,
// and which carves of a deny apply on this host), so the profile is byte
// for byte the reviewed artifact.
func seatbeltArgv(profile []byte, p *policy.Policy, host seatbelt.Host, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	if strings.HasPrefix(argv[0], "-") {
		// sandbox-exec would read it as one of its own options.
		return nil, fmt.Errorf("a command may not start with %q under sandbox-exec: give its path (./%s)", "-", argv[0])
	}
	if err := host.Check(); err != nil {
		return nil, err
	}
	full := []string{SandboxExec, "-p", string(profile)}
	for _, d := range seatbelt.HostDefines(p, host) {
		full = append(full, "-D", d)
	}
	return append(full, argv...), nil
}

// seatbeltExists is host.Exists for p's profile on this machine, now: for
// each path seatbelt.Probes names, on this host, whether it exists the way
// the reference's realpath, when it starts, adopts it (see existsNow). A
// probe under a directory host does not name is absent.
func seatbeltExists(p *policy.Policy, host seatbelt.Host) map[string]bool {
	out := map[string]bool{}
	for _, q := range seatbelt.Probes(p) {
		c, ok := host.Concrete(q)
		out[q] = ok && existsNow(c)
	}
	return out
}

// existsNow reports whether path q exists and resolves to itself or to
// its /private form (/tmp/x to /private/tmp/x): every component exists
// and none is a symlink but the fixed /tmp, /var, /etc. A symlink anywhere
// else counts as absent, the link itself too: the reference's realpath
// then leads elsewhere, and where that is neither the path nor its
// /private form it keeps the spelling as written, which Seatbelt never
// matches; the /private spelling would name the link, not what it leads
// to. A dangling link, or a path that cannot be resolved (a component
// that is not a directory, no permission), is absent, as realpath fails
// there too.
func existsNow(q string) bool {
	r, err := filepath.EvalSymlinks(q)
	return err == nil && adoptable(q, r)
}

// adoptable reports whether resolved is path q itself or its /private
// form, with q's "." and ".." folded (the reference compares with the
// normalised spelling).
func adoptable(q, resolved string) bool {
	c := path.Clean(q)
	return resolved == c || resolved == "/private"+c
}

// LogTag is the tag a profile's rules log violations with
// (docs/reference.md#macos-log-tag): CMD64_, the base64 of the first 100 UTF-16 units
// of the attribution key (the command), _END_, and the session suffix.
func LogTag(key, suffix string) string {
	return violations.TagPrefix + violations.Key(key) + "_END_" + suffix
}

// sessionSuffix is a per-process suffix: "_", up to nine base-36
// characters of r, "_SBX".
func sessionSuffix(r uint64) string {
	s := strconv.FormatUint(r, 36)
	if len(s) > 9 {
		s = s[:9]
	}
	return "_" + s + "_SBX"
}

// darwinEnv is the command's environment on macOS: base with the denied
// credential variables removed and the masked ones replaced by a sentinel
// (mask gives it), git's safe.directory entries numbered after any
// inherited GIT_CONFIG_COUNT (an inherited 0 turns them off, docs/reference.md#macos-env),
// then the proxy variables, which win over anything inherited.
func darwinEnv(base []string, p *policy.Policy, proxyVars []string, mask func(string) string) []string {
	env := append([]string{}, base...)
	for _, u := range p.Env.Unset {
		env = unsetEnv(env, u.Name)
	}
	for _, m := range p.Env.Mask {
		env = setEnv(env, m.Name, mask(m.Name))
	}
	if dirs := p.Env.GitSafeDirectories; len(dirs) > 0 {
		inherited := envValue(env, "GIT_CONFIG_COUNT")
		if n, err := strconv.Atoi(inherited); inherited != "0" {
			if err != nil {
				n = 0
			}
			for _, v := range policy.GitSafeValues(dirs) {
				env = setEnv(env, fmt.Sprintf("GIT_CONFIG_KEY_%d", n), "safe.directory")
				env = setEnv(env, fmt.Sprintf("GIT_CONFIG_VALUE_%d", n), v)
				n++
			}
			env = setEnv(env, "GIT_CONFIG_COUNT", strconv.Itoa(n))
		}
	}
	for _, kv := range proxyVars {
		k, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, k, v)
	}
	return env
}

// setEnv replaces every NAME= entry of env with one NAME=value, at the end.
func setEnv(env []string, name, value string) []string {
	return append(unsetEnv(env, name), name+"="+value)
}

func unsetEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

// LogStreamArgs is the command that streams the Seatbelt denials tagged
// with suffix from the macOS system log (docs/reference.md#macos-log-tag).
func LogStreamArgs(suffix string) []string {
	return []string{"/usr/bin/log", "stream", "--predicate", `(eventMessage ENDSWITH "` + suffix + `")`, "--style", "compact"}
}

// readSeatbeltLog records the denials in r, the output of LogStreamArgs,
// until r ends: each chunk read is parsed as the reference parses one
// (violations.SeatbeltLog) and its denials go to the store, where
// ignoreViolations applies; kept ones also go to onViolation.
func (m *Manager) readSeatbeltLog(r io.Reader, onViolation func(violations.Entry)) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		for _, v := range violations.SeatbeltLog(string(buf[:n])) {
			if e, kept := m.store.Add(v.Line, v.Key, time.Now()); kept {
				if m.o.OnViolation != nil {
					m.o.OnViolation(e)
				}
				if onViolation != nil {
					onViolation(e)
				}
			}
		}
		if err != nil {
			return
		}
	}
}
