//go:build linux

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/internal/testenv"
	"srt.dev/review/query"
	"srt.dev/schema"
)

// TestExplainNetworkLive asks explain the network questions (a localhost
// name, a loopback literal, a name that resolves to loopback, a denied
// name, an unlisted one) and compares each answer with what a real sandbox
// does: curl through the proxy, to a server on the host's loopback. The
// name vm.test resolves to 127.0.0.1 through a private /etc/hosts (a mount
// namespace of the test's own), so the test needs root, as CI has.
func TestExplainNetworkLive(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private /etc/hosts")
	}
	testenv.Require(t, "unshare", "mount")
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "backend") }))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	port, _ := strconv.Atoi(u.Port())
	dir := project(t)
	hosts := filepath.Join(dir, "hosts")
	testenv.WriteFile(t, hosts, []byte("127.0.0.1 localhost\n127.0.0.1 vm.test\n"), 0o644)
	p := u.Port()
	for _, tt := range []struct {
		allowed, denied string
		// hosts asked about, and those that resolve to loopback through
		// the private /etc/hosts (explain cannot know what a name
		// resolves to, so it must say what happens when it is loopback).
		ask      []string
		loopback map[string]bool
		// via: the entries explain must name as reaching the host's
		// loopback; "" for none.
		via string
	}{
		{`["localhost:` + p + `", "vm.test:` + p + `"]`, `["denied.test"]`,
			[]string{"localhost", "127.0.0.1", "vm.test", "denied.test", "other.test"}, map[string]bool{"vm.test": true}, "localhost:" + p},
		{`["127.0.0.1:` + p + `"]`, `[]`,
			[]string{"127.0.0.1", "localhost", "vm.test"}, nil, "127.0.0.1:" + p},
		{`["vm.test:` + p + `", "denied.test"]`, `["denied.test"]`,
			[]string{"vm.test", "denied.test", "localhost"}, map[string]bool{"vm.test": true}, ""},
	} {
		settings := filepath.Join(dir, "s.json")
		text := `{"network": {"allowedDomains": ` + tt.allowed + `, "deniedDomains": ` + tt.denied + `}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`
		testenv.WriteFile(t, settings, []byte(text), 0o644)
		pol, diags, err := compiler.CompileFile("s.json", []byte(text), schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			t.Fatal(err, diags)
		}
		e := query.New(pol, query.Options{})

		var script strings.Builder
		for _, h := range tt.ask {
			fmt.Fprintf(&script, "echo \"%s $(curl -s --noproxy '' --max-time 10 -o /dev/null -w '%%{http_code}' http://%s:%s/)\"\n", h, h, p)
		}
		cmd := exec.Command("unshare", "-m", "sh", "-c", `mount --make-rprivate / && mount --bind "$1" /etc/hosts && exec "$2" --settings "$3" -c "$4"`, "sh", hosts, srtBin, settings, script.String())
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.allowed, err, out)
		}
		live := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if h, code, ok := strings.Cut(l, " "); ok {
				live[h] = code
			}
		}
		for _, h := range tt.ask {
			d := e.Connect(h, port, query.Linux)
			reached := live[h] == "200"
			switch {
			case d.Allow && tt.loopback[h]:
				// Allowed by the rules, refused by the guard at the
				// address: the answer must say so.
				if reached || !strings.Contains(d.Why, "a name that resolves to loopback") {
					t.Errorf("%s with %s: the sandbox got %s; explain says %s (%s)", h, tt.allowed, live[h], d.Verdict(), d.Why)
				}
			case d.Allow != reached:
				t.Errorf("%s with %s: the sandbox got %s; explain says %s (%s)", h, tt.allowed, live[h], d.Verdict(), d.Why)
			case reached && !strings.Contains(d.Why, "host's own loopback"):
				t.Errorf("%s with %s reached the host's loopback; explain does not say so: %s", h, tt.allowed, d.Why)
			}
		}
		// The overview's line on the host's loopback.
		for _, l := range e.Summary([]query.Target{query.Linux}) {
			if l.Subject != "local binding (listen on localhost)" {
				continue
			}
			switch {
			case tt.via == "" && !strings.Contains(l.Why, "the host's loopback is not reachable ("):
				t.Errorf("%s: nothing reaches the host's loopback; explain says %q", tt.allowed, l.Why)
			case tt.via != "" && !strings.HasSuffix(l.Why, "through the proxies it is, for "+tt.via):
				t.Errorf("%s: %s reaches the host's loopback; explain says %q", tt.allowed, tt.via, l.Why)
			}
		}
	}
}
