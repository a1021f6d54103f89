//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"srt.dev/internal/testenv"
)

var (
	buildSrtOnce sync.Once
	buildSrtErr  error
)

// srtBinDir builds srt beside the srtc that TestMain built, so that the
// scripts run the real binaries (srt finds srtc beside itself).
func srtBinDir(t *testing.T) string {
	dir := filepath.Dir(os.Getenv("SRTC"))
	buildSrtOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "srt"), "srt.dev/cmd/srt").CombinedOutput()
		if err != nil {
			buildSrtErr = fmt.Errorf("building srt: %v\n%s", err, out)
		}
	})
	if buildSrtErr != nil {
		t.Fatal(buildSrtErr)
	}
	return dir
}

// TestScript runs the txtar scripts in testdata/script: the examples of
// the documentation, run as they are shown there. Each script gets
// HOME=$WORK, srt and srtc on PATH, and a web server on 127.0.0.1:$PORT
// that answers every request with 200.
func TestScript(t *testing.T) {
	testenv.Require(t, "bwrap", "curl", "bash")
	bin := srtBinDir(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("SRT_UPDATE") == "1",
		Setup: func(env *testscript.Env) error {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintln(w, "hello")
			}))
			env.Defer(server.Close)
			_, port, err := net.SplitHostPort(server.Listener.Addr().String())
			if err != nil {
				return err
			}
			if _, err := strconv.Atoi(port); err != nil {
				return err
			}
			env.Setenv("PORT", port)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("XDG_CACHE_HOME", os.Getenv("XDG_CACHE_HOME"))
			return nil
		},
	})
}
