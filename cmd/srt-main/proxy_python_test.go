//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// pythonDecider is a decider written for the reference's protocol in
// another language than Go: Python, speaking the framing by hand (a
// 4-byte big-endian length, then the JSON json.dumps writes, with its
// spaces). Its hello lists both domain lists, the deny list empty; its
// allow verdicts set a header to a list of values, the shape of a req's
// headers.
const pythonDecider = `
import json, socket, struct, sys

link = socket.socket(fileno=3)

def read():
    def exactly(n):
        b = b""
        while len(b) < n:
            chunk = link.recv(n - len(b))
            if not chunk:
                sys.exit(0)
            b += chunk
        return b
    (n,) = struct.unpack(">I", exactly(4))
    return json.loads(exactly(n).decode("utf-8"))

def send(msg):
    b = json.dumps(msg).encode("utf-8")
    link.sendall(struct.pack(">I", len(b)) + b)

hello = read()
assert hello == {"t": "hello", "proto": 1}, hello
send({"t": "hello", "proto": 1, "allowedDomains": ["127.0.0.1"], "deniedDomains": []})
while True:
    req = read()
    print("req", req["method"], req["path"], file=sys.stderr, flush=True)
    if req["path"] == "/no":
        send({"t": "verdict", "id": req["id"], "action": "deny", "status": 451, "reason": "not here"})
    else:
        send({"t": "verdict", "id": req["id"], "action": "allow",
              "setHeaders": {"x-added": ["v1", "v2"], "x-one": "1"}, "removeHeaders": ["x-drop"]})
`

// TestProxyPythonDecider runs srt proxy with pythonDecider at the other
// end of its --decider-fd: the hello and the verdicts are accepted, the
// header gets both values, and a deny reaches the client.
func TestProxyPythonDecider(t *testing.T) {
	tools := testenv.Require(t, "python3", "curl")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "x-added=%s x-one=%s x-drop=%q", strings.Join(r.Header.Values("X-Added"), "|"), r.Header.Get("X-One"), r.Header.Get("X-Drop"))
	}))
	defer up.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	proxyEnd, deciderEnd := os.NewFile(uintptr(fds[0]), "proxy"), os.NewFile(uintptr(fds[1]), "decider")

	var proxyErr, deciderErr bytes.Buffer
	px := exec.Command(srtBin, "proxy", "--listen-fd", "3", "--decider-fd", "4", "--plaintext-header-set")
	px.ExtraFiles = []*os.File{lf, proxyEnd}
	px.Stderr = &proxyErr
	py := exec.Command(tools[0], "-c", pythonDecider)
	py.ExtraFiles = []*os.File{deciderEnd}
	py.Stderr = &deciderErr
	for _, c := range []*exec.Cmd{px, py} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	lf.Close()
	proxyEnd.Close()
	deciderEnd.Close()

	out, err := curl(t, "-x", "http://"+addr, "-H", "X-Drop: gone", up.URL+"/ok")
	if err != nil || out != `x-added=v1|v2 x-one=1 x-drop=""` {
		t.Errorf("allowed request = %v %q; srt proxy:\n%s\ndecider:\n%s", err, out, &proxyErr, &deciderErr)
	}
	out, _ = curl(t, "-x", "http://"+addr, "-D", "-", up.URL+"/no")
	if !strings.Contains(out, "451 Unavailable For Legal Reasons") || !strings.Contains(out, "X-Deny-Reason: decider") || !strings.HasSuffix(out, "not here\n") {
		t.Errorf("denied request = %q; srt proxy:\n%s\ndecider:\n%s", out, &proxyErr, &deciderErr)
	}
	// The link is still up: nothing above broke the protocol.
	time.Sleep(100 * time.Millisecond)
	if px.ProcessState != nil || strings.Contains(proxyErr.String(), "decider protocol") {
		t.Errorf("srt proxy ended the link:\n%s", &proxyErr)
	}
	if got := deciderErr.String(); !strings.Contains(got, "req GET /ok") || !strings.Contains(got, "req GET /no") {
		t.Errorf("the decider saw:\n%s", got)
	}
}
