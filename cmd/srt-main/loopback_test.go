//go:build linux

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/internal/testtls"
)

// bareRepo makes a bare git repository served over git's dumb HTTP
// protocol from dir/x.git, whose one commit holds f ("from the host").
func bareRepo(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	for _, args := range [][]string{
		{"init", "-q", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "empty"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	testenv.WriteFile(t, filepath.Join(src, "f"), []byte("from the host\n"), 0o644)
	for _, args := range [][]string{
		{"-C", src, "add", "f"},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "f"},
		{"clone", "-q", "--bare", src, filepath.Join(dir, "x.git")},
		{"-C", filepath.Join(dir, "x.git"), "update-server-info"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
}

// TestAllowedLoopback: with "localhost:PORT" in network.allowedDomains,
// the plain command reaches a server on this host's loopback at PORT
// (curl and git clone over HTTPS, no proxy option): NO_PROXY does not
// exempt localhost, so the clients ask srt's proxy, which dials this
// host's loopback. Another port of localhost, where a server listens too,
// is refused with srt's refusal line; a server the command starts on the
// sandbox's own 127.0.0.1 is still reached directly. A client that
// ignores the proxy variables fails, and srt says why it may have; a
// command that used the entry and failed gets no such note. Without the
// entry (the control) the server sees nothing, and the proxy, asked,
// refuses it. As the caller, and as nobody when the tests run as root.
func TestAllowedLoopback(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "git", "python3")
	www := t.TempDir()
	bareRepo(t, www)
	testenv.WriteFile(t, filepath.Join(www, "hello"), []byte("hello from the host\n"), 0o644)
	var seen atomic.Int64
	files := http.FileServer(http.Dir(www))
	srv, err := testtls.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		files.ServeHTTP(w, r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var otherSeen atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherSeen.Add(1)
		fmt.Fprintln(w, "the other port")
	}))
	defer other.Close()
	u, _ := url.Parse(other.URL)
	otherPort := u.Port()

	settings := func(allowed string) string {
		return `{"network": {"allowedDomains": [` + allowed + `], "deniedDomains": []},
			"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	}
	script := strings.Join([]string{
		`export GIT_SSL_CAINFO="$HOME/ca.pem"`,
		`curl -sS --max-time 10 --cacert "$GIT_SSL_CAINFO" https://localhost:` + srv.Port + `/hello; echo "curl $?"`,
		`git clone -q https://localhost:` + srv.Port + `/x.git x 2>/dev/null && cat x/f; echo "git $?"`,
		`curl -s --max-time 10 -o /dev/null -w "other %{http_code}\n" http://localhost:` + otherPort + `/`,
		// A server of the command's own, on the sandbox's loopback.
		`python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & s=$!`,
		`for i in $(seq 100); do c=$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8765/); [ "$c" = 200 ] && break; sleep 0.05; done; echo "own $c"; kill $s`,
	}, "\n")
	for _, uid := range testUsers() {
		t.Run("uid"+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			testenv.WriteFile(t, filepath.Join(root, "ca.pem"), srv.CA.PEM, 0o644)
			testenv.WriteFile(t, filepath.Join(root, "s.json"), []byte(settings(`"localhost:`+srv.Port+`"`)), 0o644)
			seen.Store(0)
			otherSeen.Store(0)
			code, out := srtAs(t, bin, uid, root, proj, "--settings", filepath.Join(root, "s.json"), "--refusals", "always", "-c", script)
			var lacks []string
			for _, want := range []string{
				"hello from the host\ncurl 0\n",
				"from the host\ngit 0\n",
				"other 403\n",
				"own 200\n",
				`srt sandbox refused localhost:` + otherPort + `: it is not in network.allowedDomains. To allow it, add "localhost:` + otherPort + `" to network.allowedDomains in `,
			} {
				if !strings.Contains(out, want) {
					lacks = append(lacks, want)
				}
			}
			if lacks != nil {
				t.Errorf("exit %d, output lacks %q:\n%s", code, lacks, out)
			}
			if seen.Load() == 0 || otherSeen.Load() != 0 {
				t.Errorf("the allowed server saw %d requests (want some), the other %d (want none)", seen.Load(), otherSeen.Load())
			}

			// A client that ignores the proxy variables connects to the
			// sandbox's own loopback, and fails: srt says why it may have.
			note := `srt: "localhost:` + srv.Port + `" (network.allowedDomains[0]) allows this host's loopback only through srt's proxy, and nothing asked the proxy for it: inside the sandbox the loopback is the sandbox's own`
			if strings.Contains(out, note) {
				t.Errorf("the note after a run that used the rule:\n%s", out)
			}
			code, out = srtAs(t, bin, uid, root, proj, "--settings", filepath.Join(root, "s.json"), "--refusals", "always", "-c",
				`curl -sS --noproxy "*" --max-time 10 https://localhost:`+srv.Port+`/hello`)
			if code != 7 || !strings.Contains(out, "Couldn't connect to server") || !strings.Contains(out, note) {
				t.Errorf("a client that ignores the proxy: exit %d, want 7 and the note\n%s", code, out)
			}
			// A command that fails after it used the rule gets no note.
			code, out = srtAs(t, bin, uid, root, proj, "--settings", filepath.Join(root, "s.json"), "--refusals", "always", "-c",
				`curl -sS --max-time 10 --cacert "$HOME/ca.pem" https://localhost:`+srv.Port+`/hello; exit 3`)
			if code != 3 || !strings.Contains(out, "hello from the host") || strings.Contains(out, note) {
				t.Errorf("a command that used the rule and failed: exit %d, want 3 and no note\n%s", code, out)
			}

			// The control: without the entry, the server is not reached,
			// and the proxy, asked, refuses it.
			// Warm, the next sandbox is prepared once a command has
			// ended, its placeholders for x's git directory in x: the
			// server ends before x goes (docs/srt.md, warm start).
			stopWarmServers(t, proj)
			testenv.RemoveAll(t, filepath.Join(proj, "x"))
			testenv.WriteFile(t, filepath.Join(root, "c.json"), []byte(settings(`"example.com"`)), 0o644)
			seen.Store(0)
			asked := script + "\n" + `curl -s --noproxy "" --max-time 10 https://localhost:` + srv.Port + `/hello`
			code, out = srtAs(t, bin, uid, root, proj, "--settings", filepath.Join(root, "c.json"), "--refusals", "always", "-c", asked)
			refused := `srt sandbox refused localhost:` + srv.Port + `: it is not in network.allowedDomains.`
			if strings.Contains(out, "curl 0\n") || strings.Contains(out, "git 0\n") || !strings.Contains(out, "own 200\n") ||
				!strings.Contains(out, refused) || seen.Load() != 0 || otherSeen.Load() != 0 {
				t.Errorf("control: the servers saw %d and %d requests: exit %d\n%s", seen.Load(), otherSeen.Load(), code, out)
			}
		})
	}
}
