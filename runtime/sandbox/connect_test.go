//go:build !windows

package sandbox

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestConnect: the ProxyCommand opens a CONNECT tunnel through the proxy
// of HTTP_PROXY, with its token, and joins it to its standard streams;
// when the far side closes the tunnel, it returns, stdin's writer still
// holding its end, and no goroutine of its copy is left.
func TestConnect(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			got <- err.Error()
			return
		}
		got <- req.Method + " " + req.Host + " " + req.Header.Get("Proxy-Authorization")
		c.Write([]byte("HTTP/1.1 200 OK\r\n\r\nSSH-2.0-test\r\n"))
	}()
	t.Setenv("HTTP_PROXY", "http://srt.key:token@"+l.Addr().String())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // held open while Connect runs: as ssh does
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Connect([]string{"github.com", "22"}, r, &out) }()
	select {
	case err := <-done:
		if err != nil || out.String() != "SSH-2.0-test\r\n" {
			t.Errorf("Connect = %v, stdout %q", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Connect did not return when the far side closed the tunnel")
	}
	if g := <-got; g != "CONNECT github.com:22 Basic c3J0LmtleTp0b2tlbg==" {
		t.Errorf("the proxy got %q", g)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "sandbox.Connect") {
		t.Errorf("a goroutine of Connect outlives it:\n%s", stacks)
	}
}
