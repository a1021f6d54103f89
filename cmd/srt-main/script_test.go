//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"srt.dev/internal/testenv"
	"srt.dev/internal/testtls"
)

// scriptToken is the real token of the README's masked-credential
// example: the HTTPS server of the scripts accepts only it.
const scriptToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"

// TestScript runs the txtar scripts in testdata/script: the examples of
// the documentation, run as they are shown there. Each script gets
// HOME=$WORK, srt and srtc on PATH, a web server on 127.0.0.1:$PORT that
// answers every request with 200, and an HTTPS server on loopback port
// $TLSPORT (its CA in $WORK/upstream-ca.pem, standing in for a public
// one) that says whether a request carried "Bearer " + scriptToken.
func TestScript(t *testing.T) {
	testenv.Require(t, "bwrap", "curl", "bash")
	bin := binDir
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
			tlsPort, err := tokenServer(env)
			if err != nil {
				return err
			}
			env.Setenv("TLSPORT", tlsPort)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("XDG_CACHE_HOME", os.Getenv("XDG_CACHE_HOME"))
			return nil
		},
	})
}

// tokenServer starts the scripts' HTTPS server and writes its CA.
func tokenServer(env *testscript.Env) (string, error) {
	srv, err := testtls.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+scriptToken {
			fmt.Fprintln(w, "token accepted: hello, agent")
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintln(w, "token refused")
	}))
	if err != nil {
		return "", err
	}
	env.Defer(srv.Close)
	return srv.Port, os.WriteFile(filepath.Join(env.WorkDir, "upstream-ca.pem"), srv.CA.PEM, 0o644)
}
