//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
)

// userHooksPathAttack: the user's ~/.gitconfig keeps hooks in each
// working tree (core.hooksPath = .githooks, as husky and many teams do);
// the command makes a repository and plants a hook there, where the
// user's next commit runs it.
var userHooksPathAttack = attack{
	name: "a hook where the user's relative core.hooksPath points",
	setup: func(w *world) {
		w.write("s.json", writeProject)
		w.write(filepath.Join(w.home, ".gitconfig"), "[core]\n\thooksPath = .githooks\n")
	},
	steps: func(w *world, sandboxed bool) {
		w.inSandbox(sandboxed, "s.json", `mkdir -p a/b/c && cd a/b/c && git init -q sub && mkdir sub/.githooks && cp "$P" sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit`)
		w.hostGit(filepath.Join(w.proj, "a/b/c/sub"))
	},
	judge: func(w *world) string { return w.pwned() },
}

// tunnelsAttack: the command opens as many tunnels through the proxies
// as it can (CONNECT and SOCKS5) to an allowed upstream that never
// answers and never closes, and plants a hook, so that srt would have no
// descriptor left for the check after the run; srt runs with a low
// open-file limit, as a container might, then with one so low that the
// budget's least leaves the check too few. The command's processes die with
// the sandbox, and its ends of the tunnels with them, but srt's do not: a
// tunnel whose client has gone waits for its upstream (for up to
// proxy.DefaultTunnelIdle), holding the accepted connection and the one
// upstream. Only the proxies' connection budget (the descriptors kept in
// reserve) and stopping the proxies before the check leave the check its
// descriptors.
var tunnelsAttack = attack{
	name: "the check starved of descriptors by connections",
	setup: func(w *world) {
		port := silentServer(w.t)
		w.write("s.json", `{"network": {"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`)
		// A repository deeper than the scan at the start looks, which
		// existed before the run: a walk that could not open one of its
		// unchanged ancestors would not reach its hooks.
		deep := filepath.Join(w.proj, "deep/a/b/c")
		testenv.MkdirAll(w.t, deep, 0o755)
		w.chown()
		gitRepo(w, deep)
		// The proxies ask for the credentials srt put in the proxy
		// variables, as any client the command runs sends them.
		w.write(filepath.Join(w.base, "conns.py"), `import base64, os, socket, struct, sys, urllib.parse
port = int(sys.argv[1])
http = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
socks5 = urllib.parse.urlsplit(os.environ["FTP_PROXY"])
socks = []
def tunnel(proxy):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=2)
    user, password = urllib.parse.unquote(proxy.username).encode(), urllib.parse.unquote(proxy.password).encode()
    if proxy is http:
        auth = base64.b64encode(user + b":" + password)
        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nProxy-Authorization: Basic %s\r\n\r\n" % (port, port, auth))
        reply = b""
        while b"\r\n\r\n" not in reply:
            b = s.recv(1024)
            if not b:
                break
            reply += b
        ok = reply.split(b" ")[1:2] == [b"200"]
    else:
        s.sendall(b"\x05\x01\x02")
        ok = s.recv(2) == b"\x05\x02"
        if ok:
            s.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(password)]) + password)
            ok = s.recv(2) == b"\x01\x00"
        if ok:
            s.sendall(b"\x05\x01\x00\x01\x7f\x00\x00\x01" + struct.pack(">H", port))
            ok = s.recv(10)[:2] == b"\x05\x00"
    if ok:
        socks.append(s)
    else:
        s.close()
    return ok
# Until a proxy refuses one (its budget) or cannot take it (no
# descriptor left to accept it: the attempt times out).
for proxy in (http, socks5):
    for i in range(400):
        try:
            if not tunnel(proxy):
                break
        except OSError:
            break
print(len(socks), "tunnels", flush=True)
`)
		testenv.WriteFile(w.t, filepath.Join(w.base, "port"), []byte(port), 0o644)
	},
	steps: func(w *world, sandboxed bool) {
		if !sandboxed {
			return
		}
		port, _ := os.ReadFile(filepath.Join(w.base, "port"))
		script := `python3 "$BASE/conns.py" ` + string(port) + ` && cp "$P" deep/a/b/c/.git/hooks/pre-commit && chmod +x deep/a/b/c/.git/hooks/pre-commit`
		// 256: more than the budget lets through would starve the check;
		// 48: even the budget's least (16 connections) leaves the check
		// too few unless the proxies stop first.
		for _, limit := range tunnelLimits {
			out := w.sh(fmt.Sprintf(`ulimit -n %d; %q --settings s.json -c %q; echo "exit $?"`, limit, w.bin, script))
			testenv.WriteFile(w.t, filepath.Join(w.base, fmt.Sprint("out", limit)), []byte(out), 0o644)
			w.hostGit(filepath.Join(w.proj, "deep/a/b/c"))
		}
	},
	judge: func(w *world) string {
		var bad []string
		if p := w.pwned(); p != "" {
			bad = append(bad, "the hook ran: "+p)
		}
		for _, limit := range tunnelLimits {
			out, _ := os.ReadFile(filepath.Join(w.base, fmt.Sprint("out", limit)))
			if n := tunnelsOpened(string(out)); n < 8 {
				bad = append(bad, fmt.Sprintf("with %d descriptors, the command opened %d tunnels, want at least 8: the test does not test: %s", limit, n, out))
			}
			if !strings.Contains(string(out), "exit 0") {
				bad = append(bad, fmt.Sprintf("with %d descriptors, the check did not finish: %s", limit, out))
			}
		}
		return strings.Join(bad, "; ")
	},
	noControl: true,
}

// tunnelLimits are the open-file limits tunnelsAttack runs srt with.
var tunnelLimits = []int{256, 48}

// tunnelsOpened is the count conns.py printed ("N tunnels"), or -1.
func tunnelsOpened(out string) int {
	for _, l := range strings.Split(out, "\n") {
		if n, ok := strings.CutSuffix(strings.TrimSpace(l), " tunnels"); ok {
			if i, err := strconv.Atoi(n); err == nil {
				return i
			}
		}
	}
	return -1
}

// silentServer listens on the host's loopback for the test, accepts every
// connection and holds it until the test ends: it never reads, answers
// or closes. It returns the port.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// lockedAwayAttack: the command plants names, then takes the permissions
// of their directories away (000: not even searchable; 0111: searchable
// only), so that a check that cannot list them passes over them; the
// user, their owner, can give them back at any time.
var lockedAwayAttack = attack{
	name:  "names planted in directories their owner then locks",
	setup: func(w *world) { w.write("s.json", writeProject) },
	steps: func(w *world, sandboxed bool) {
		w.inSandbox(sandboxed, "s.json", `mkdir -p a b/c && echo 'echo evil' > a/.bashrc && echo 'echo evil' > b/c/.profile && chmod 000 a && chmod 111 b`)
	},
	judge: func(w *world) string {
		var out []string
		for _, p := range []string{"a/.bashrc", "b/c/.profile"} {
			if _, err := os.Lstat(filepath.Join(w.proj, p)); err == nil {
				out = append(out, p+" is there")
			}
		}
		return strings.Join(out, ", ")
	},
}

// Sizes of manyNamesAttack: hooks planted in one hooks directory (more
// than the check lists one by one) and .bashrc files, one per directory.
const (
	plantedHooks  = 10000
	plantedBashrc = 1000
)

// manyNamesAttack: the command plants plantedHooks hooks (not
// empty: an empty file runs nothing, and the check passes over it) in the
// hooks directory of a repository that existed before the run (one of
// them the pre-commit hook the user's next commit runs) and plantedBashrc
// .bashrc files, one per directory, so that moving them one by one would
// keep srt busy and print a line for each. srt ends; it prints a bounded
// number of lines (at most maxQuarantineLines names and a count); it
// moves the hooks directory whole (the count is at most one item per
// planted directory and a few more); every planted .bashrc is moved, or
// srt exits 125 (the tree unchecked) and srt quarantine check moves what
// is left; and the host's git then runs no planted hook. The test's own
// timeout (a minute) is only a guard against a hang.
var manyNamesAttack = attack{
	name: "many planted names",
	setup: func(w *world) {
		w.write("s.json", writeProject)
		// Deeper than the scan at the start looks: only the check after
		// the run protects its hooks.
		deep := filepath.Join(w.proj, "deep/a/b/c")
		testenv.MkdirAll(w.t, deep, 0o755)
		w.chown()
		gitRepo(w, deep)
	},
	steps: func(w *world, sandboxed bool) {
		script := fmt.Sprintf(`(cd deep/a/b/c/.git/hooks && seq %d | split -l 1 -a 5 - h && cp "$P" pre-commit && chmod +x pre-commit) && ds=$(seq -f d%%g %d) && mkdir $ds && for d in $ds; do echo 'echo evil' > $d/.bashrc; done`, plantedHooks, plantedBashrc)
		if !sandboxed {
			w.sh(script)
			w.hostGit(filepath.Join(w.proj, "deep/a/b/c"))
			return
		}
		code, _, errOut := w.srt("--settings", "s.json", "-c", script)
		report := fmt.Sprintf("exit %d\nleft %d\n%s", code, len(plantedLeft(w)), errOut)
		if code == sandbox.ExitUnchecked {
			_, _, checkOut := w.srt("quarantine", "check")
			report += "srt quarantine check:\n" + checkOut
		}
		testenv.WriteFile(w.t, filepath.Join(w.base, "report"), []byte(report), 0o644)
		w.hostGit(filepath.Join(w.proj, "deep/a/b/c"))
	},
	judge: func(w *world) string {
		var bad []string
		if p := w.pwned(); p != "" {
			bad = append(bad, "the host's git ran a planted hook: "+p)
		}
		if left := plantedLeft(w); len(left) > 0 {
			bad = append(bad, fmt.Sprintf("%d planted .bashrc files are in the tree, such as %s", len(left), left[0]))
		}
		b, err := os.ReadFile(filepath.Join(w.base, "report"))
		if err != nil {
			return strings.Join(bad, "; ") // the control: no srt
		}
		report := string(b)
		var code, left int
		fmt.Sscanf(report, "exit %d\nleft %d\n", &code, &left)
		if left > 0 && code != sandbox.ExitUnchecked {
			bad = append(bad, fmt.Sprintf("srt left %d planted .bashrc files in the tree and exited %d, not %d (unchecked)", left, code, sandbox.ExitUnchecked))
		}
		run, _, _ := strings.Cut(report, "srt quarantine check:\n")
		if lines := strings.Count(run, "\n"); lines > 40 {
			bad = append(bad, fmt.Sprintf("srt printed %d lines, want at most 40", lines))
		}
		names := 0
		for _, l := range strings.Split(run, "\n") {
			if strings.HasPrefix(l, `srt:   "`) && strings.Contains(l, "srt quarantine release ") {
				names++
			}
		}
		if names > 15 {
			bad = append(bad, fmt.Sprintf("srt named %d quarantined names, want at most 15", names))
		}
		if m := regexp.MustCompile(`(?m)^srt:   and (\d+) more$`).FindStringSubmatch(run); m != nil {
			// One item per .bashrc, the hooks directory whole, and a few
			// to spare: not one per hook.
			if n, _ := strconv.Atoi(m[1]); names+n > plantedBashrc+10 {
				bad = append(bad, fmt.Sprintf("srt quarantined %d items, want at most %d: the hooks were moved one by one", names+n, plantedBashrc+10))
			}
		} else if code == 0 {
			bad = append(bad, "srt did not count the quarantined names it did not list")
		}
		if len(bad) > 0 {
			if len(report) > 4000 {
				report = report[:4000] + "…"
			}
			bad = append(bad, "srt said:\n"+report)
		}
		return strings.Join(bad, "; ")
	},
}

// plantedLeft are the .bashrc files manyNamesAttack planted that are
// still in the tree.
func plantedLeft(w *world) []string {
	var left []string
	for i := 1; i <= plantedBashrc; i++ {
		p := filepath.Join(w.proj, fmt.Sprintf("d%d/.bashrc", i))
		if _, err := os.Lstat(p); err == nil {
			left = append(left, p)
		}
	}
	return left
}

func init() {
	attacks = append(attacks, userHooksPathAttack, tunnelsAttack, lockedAwayAttack, manyNamesAttack)
}
