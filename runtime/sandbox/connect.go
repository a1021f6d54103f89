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
)

// ConnectArg, as argv[1], runs this binary as an SSH ProxyCommand inside
// the sandbox: srt __srt_connect__ HOST PORT opens an HTTP CONNECT tunnel
// through the sandbox's proxy (with its token, from HTTP_PROXY) and joins
// it to standard input and output. GIT_SSH_COMMAND uses it, so git over
// SSH works without socat or nc.
const ConnectArg = "__srt_connect__"

// Connect is the ProxyCommand; it returns when the tunnel closes.
func Connect(args []string, stdin io.Reader, stdout io.Writer) error {
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
	done := make(chan struct{})
	go func() {
		io.Copy(c, stdin)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		close(done)
	}()
	_, err = io.Copy(stdout, br)
	return err
}
