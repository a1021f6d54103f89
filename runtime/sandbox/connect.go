package sandbox

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"srt.dev/internal/pollread"
)

// ConnectArg, as argv[1], runs this binary as an SSH ProxyCommand inside
// the sandbox: srt __srt_connect__ HOST PORT opens an HTTP CONNECT tunnel
// through the sandbox's proxy (with its token, from HTTP_PROXY) and joins
// it to standard input and output. GIT_SSH_COMMAND uses it, so git over
// SSH works without socat or nc.
const ConnectArg = "__srt_connect__"

// Connect is the ProxyCommand; it returns when the far side has closed
// the tunnel, once it has stopped copying stdin into it. stdin is read
// through pollread: the copy stops without waiting for its writer, whose
// pipe's blocking mode stays as it is.
func Connect(args []string, stdin *os.File, stdout io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: srt " + ConnectArg + " HOST PORT")
	}
	proxyURL := os.Getenv("HTTP_PROXY")
	if proxyURL == "" {
		proxyURL = os.Getenv("http_proxy")
	}
	u, err := url.Parse(proxyURL)
	if err != nil || u.Host == "" {
		return errors.New("HTTP_PROXY is not set: run inside srt")
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return err
	}
	defer c.Close()
	target := net.JoinHostPort(args[0], args[1])
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if u.User != nil {
		pass, _ := u.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)) + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sandbox's proxy refused %s: %s", target, strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode)+" "))
	}
	in, err := pollread.FromFile(stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(c, in)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	_, err = io.Copy(stdout, br)
	// The far side is done: what stdin still has goes nowhere, and a
	// write into the tunnel must not wait for it.
	in.Stop()
	c.Close()
	<-copied
	return err
}
