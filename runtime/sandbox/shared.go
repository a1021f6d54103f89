package sandbox

// The pure helpers of the Linux and the macOS runtime: what the proxies
// enforce, the command's proxy environment, exit statuses.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// proxyEnv are the variables that point the command at the proxies on
// httpPort and socksPort, except for the destinations of noProxy
// (docs/reference.md#linux-environment, docs/reference.md#macos-env); the
// user name carries the command's attribution key (violations.Key).
func proxyEnv(token, key, self, noProxy string, httpPort, socksPort int) []string {
	user := "srt." + key
	if len(user) > 255 {
		user = "srt"
	}
	userURL := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(user)
	httpURL := fmt.Sprintf("http://%s:%s@localhost:%d", userURL, token, httpPort)
	socksURL := fmt.Sprintf("socks5h://%s:%s@localhost:%d", userURL, token, socksPort)
	env := []string{
		"SANDBOX_RUNTIME=1",
		// Node reads HTTP_PROXY and HTTPS_PROXY only with this (22.21
		// and later, 24.5 and later); the reference sets it only on
		// Windows (docs/srt.md#where-srt-differs-from-the-reference-cli).
		"NODE_USE_ENV_PROXY=1",
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		"HTTP_PROXY=" + httpURL, "HTTPS_PROXY=" + httpURL, "http_proxy=" + httpURL, "https_proxy=" + httpURL,
		"GIT_CONFIG_PARAMETERS='http.proxyAuthMethod=basic'",
		"ALL_PROXY=" + httpURL, "all_proxy=" + httpURL,
		"GRPC_PROXY=" + httpURL, "grpc_proxy=" + httpURL,
		"FTP_PROXY=" + socksURL, "ftp_proxy=" + socksURL,
		"RSYNC_PROXY=localhost:" + strconv.Itoa(socksPort),
		"DOCKER_HTTP_PROXY=" + httpURL, "DOCKER_HTTPS_PROXY=" + httpURL,
		"CLOUDSDK_PROXY_TYPE=http", "CLOUDSDK_PROXY_ADDRESS=localhost", "CLOUDSDK_PROXY_PORT=" + strconv.Itoa(httpPort),
		"CLOUDSDK_PROXY_USERNAME=" + user, "CLOUDSDK_PROXY_PASSWORD=" + token,
		// git over SSH through the proxy, with srt itself as ProxyCommand.
		"GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='" + self + " " + ConnectArg + " %h %p'",
	}
	return env
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// hostDefaults fills in what Options leave to this process: the home and
// working directories (the home made absolute), the standard streams and
// the environment.
func (o *Options) hostDefaults() error {
	var err error
	if o.Home == "" {
		if o.Home, err = os.UserHomeDir(); err != nil {
			return err
		}
	}
	if o.Cwd == "" {
		if o.Cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	if o.Home, err = filepath.Abs(o.Home); err != nil {
		return err
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	return nil
}

// step reports the end of a step of the run (Options.Step).
func (o *Options) step(name string) {
	if o.Step != nil {
		o.Step(name)
	}
}
