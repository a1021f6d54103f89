package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/private"
	"srt.dev/runtime/sandbox"
)

// errInvalid reports settings srtc refused; its diagnostics were printed.
var errInvalid = errors.New("invalid settings")

// compilePolicy validates and compiles a settings file by running srtc,
// which owns the grammar: srt does not link it, and starts faster for it.
// Compiled policies are cached by the hash of the file, its name and the
// srtc binary, in a directory private to the user.
func compilePolicy(name string, data []byte, stderr io.Writer) (*policy.Policy, error) {
	srtc, err := findSrtc()
	if err != nil {
		return nil, err
	}
	key := sha256.New()
	fmt.Fprintf(key, "%s\x00%s\x00%d\x00", versionLine(), name, len(data))
	key.Write(data)
	if fi, err := os.Stat(srtc); err == nil {
		fmt.Fprintf(key, "\x00%s\x00%d\x00%d", srtc, fi.Size(), fi.ModTime().UnixNano())
	}
	sum := hex.EncodeToString(key.Sum(nil))
	if servingWarm {
		// One policy value per settings: a prepared sandbox is used by a
		// run of the same policy (sandbox.Options.Prepared).
		servedMu.Lock()
		defer servedMu.Unlock()
		if p, ok := served[sum]; ok {
			return p, nil
		}
		p, err := compileOrRead(srtc, sum, name, data, stderr)
		if err == nil {
			served[sum] = p
		}
		return p, err
	}
	return compileOrRead(srtc, sum, name, data, stderr)
}

// servingWarm is set in the warm server, whose runs share each policy
// they read (served, by the key of the policy cache).
var (
	servingWarm bool
	servedMu    sync.Mutex
	served      = map[string]*policy.Policy{}
)

// compileOrRead reads the policy from the policy cache (its key sum), or
// compiles it with srtc and caches it.
func compileOrRead(srtc, sum, name string, data []byte, stderr io.Writer) (*policy.Policy, error) {
	cacheFile := ""
	if dir, err := cacheDir(); err == nil {
		cacheFile = filepath.Join(dir, sum+".json")
		if b, err := os.ReadFile(cacheFile); err == nil {
			if p, err := decodePolicy(b); err == nil {
				return p, nil
			}
		}
	}
	cmd := exec.Command(srtc, "policy", "--os", "posix", "--name", name, "-")
	cmd.Stdin = bytes.NewReader(data)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		stderr.Write(errOut.Bytes())
		return nil, errInvalid
	case err != nil:
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return nil, fmt.Errorf("running %s: %v: %s", srtc, err, msg)
		}
		return nil, fmt.Errorf("running %s: %v", srtc, err)
	}
	p, err := decodePolicy(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s printed a policy this srt cannot read (%v): install srt and srtc from the same version", srtc, err)
	}
	if cacheFile != "" {
		if f, err := os.CreateTemp(filepath.Dir(cacheFile), "tmp-"); err == nil {
			f.Write(out.Bytes())
			f.Close()
			os.Rename(f.Name(), cacheFile)
		}
	}
	return p, nil
}

func decodePolicy(b []byte) (*policy.Policy, error) {
	var p policy.Policy
	if err := json.Unmarshal(b, &p); err != nil {
		// A policy of another format may not decode as this one: say so.
		var v struct {
			FormatVersion int `json:"formatVersion"`
		}
		if json.Unmarshal(b, &v) != nil || v.FormatVersion == policy.FormatVersion {
			return nil, err
		}
		p.FormatVersion = v.FormatVersion
	}
	if p.FormatVersion != policy.FormatVersion {
		return nil, fmt.Errorf("policy format %d, want %d", p.FormatVersion, policy.FormatVersion)
	}
	return &p, nil
}

// findSrtc returns $SRTC, or srtc beside this executable, or on PATH.
func findSrtc() (string, error) {
	if p := os.Getenv("SRTC"); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("SRTC=%s is not an executable file: set SRTC to srtc's path, or unset it to use the srtc beside srt or on PATH", p)
		}
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "srtc"); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("srtc"); err == nil {
		return p, nil
	}
	return "", errNoSrtc
}

// srtcOnPath are the srtc a later run without $SRTC could take from PATH
// (sandbox.PathCandidates), whatever this run takes: none when there is
// one beside srt-main, which findSrtc takes first.
func srtcOnPath() []string {
	if self, err := os.Executable(); err == nil && isExecutable(filepath.Join(filepath.Dir(self), "srtc")) {
		return nil
	}
	return sandbox.PathCandidates("srtc")
}

// installCommand installs srt's programs from its checkout, as the
// README's quick start does (TestSrtcMissingInstall).
const installCommand = "CGO_ENABLED=0 go install ./cmd/srtc ./cmd/srt ./cmd/srt-main ./cmd/srt-init"

// errNoSrtc is findSrtc's error when there is no srtc to find.
var errNoSrtc = errors.New("srt validates settings with srtc, which is neither beside srt nor on PATH: install them together (" + installCommand + ", in srt's checkout)")

// srtcCheck is srt doctor's check of srtc: found as a run finds it
// (findSrtc), and answering --version. Every run but srt run --plan
// compiles its settings with it.
func srtcCheck() sandbox.Check {
	c := sandbox.Check{Name: "srtc"}
	remedy := "install srtc from the same source as srt, beside it: CGO_ENABLED=0 go install ./cmd/srtc (in srt's checkout); or set SRTC to its path"
	p, err := findSrtc()
	switch {
	case errors.Is(err, errNoSrtc):
		where := "srt"
		if self, err := os.Executable(); err == nil {
			where = filepath.Dir(self)
		}
		c.Detail, c.Remedy = "not in "+where+" nor on PATH: every run but srt run --plan fails, since srt compiles the settings with srtc", remedy
		return c
	case err != nil:
		c.Detail, c.Remedy = err.Error(), "set SRTC to srtc's path, or unset it"
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	v := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(v, "srtc ") {
		c.Detail = fmt.Sprintf("%s --version did not answer as srtc does (%v, %q); every run but srt run --plan fails without it", p, err, v)
		c.Remedy = remedy
		return c
	}
	c.OK, c.Detail = true, p+": "+v
	if mine := strings.TrimPrefix(versionLine(), "srt "); strings.TrimPrefix(v, "srtc ") != mine {
		c.Note = "srt is " + mine + ": install them together from the same source (" + installCommand + ")"
	}
	return c
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// cacheDir is the private directory of compiled policies.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "srt", "policies-v"+strconv.Itoa(policy.FormatVersion))
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", err
	}
	if err := private.Dir(dir); err != nil {
		return "", err
	}
	return dir, nil
}
