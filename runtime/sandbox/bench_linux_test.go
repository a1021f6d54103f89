//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

// BenchmarkSandboxNetwork runs the same curl script on the host (direct:
// the floor) and in a sandbox (through the sandbox's proxies), one after
// the other in each iteration so that they share the machine's load, and
// reports the sandbox's figures as ratios to the host's:
//
//   - 512 MiB from a loopback server, over plain HTTP (curl's own
//     download speed; in the sandbox an absolute-form request to the
//     HTTP proxy) and through CONNECT (curl -p);
//   - 200 sequential requests from one curl to a server that closes each
//     connection after its answer, so that each needs a new connection
//     (in the sandbox a new upstream connection of the HTTP proxy, or
//     with -p a new CONNECT tunnel): the sum of curl's own times, which
//     leaves out starting curl.
//
// Run it with:
//
//	SRT_REQUIRE_SANDBOX=1 go test ./runtime/sandbox -run '^$' -bench SandboxNetwork -benchtime 5x
func BenchmarkSandboxNetwork(b *testing.B) {
	testenv.Require(b, "bwrap", "curl")
	const big = 512 << 20
	addr := benchServer(b, big)
	port := addr[strings.LastIndex(addr, ":")+1:]
	p, diags, err := compiler.CompileFile("settings.json", []byte(`{"network": {"allowedDomains": ["127.0.0.1:`+port+`"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		b.Fatal(err, diags)
	}
	m, err := NewManager(p, ManagerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	curl := `curl -s --noproxy ""`
	script := fmt.Sprintf(`set -e
%[1]s -o /dev/null -w '%%{speed_download}\n' http://%[2]s/big
%[1]s -p -o /dev/null -w '%%{speed_download}\n' http://%[2]s/big
%[1]s -w '%%{stderr}%%{time_total}\n' "http://%[2]s/small?[1-200]" 2>&1 >/dev/null | awk '{ s += $1 } END { print s }'
%[1]s -p -w '%%{stderr}%%{time_total}\n' "http://%[2]s/small?[1-200]" 2>&1 >/dev/null | awk '{ s += $1 } END { print s }'
`, curl, addr)
	env := []string{"PATH=" + os.Getenv("PATH")}
	dir := b.TempDir()
	parse := func(out string) [4]float64 {
		f := strings.Fields(out)
		if len(f) != 4 {
			b.Fatalf("script output %q", out)
		}
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(f[i], 64)
		}
		return v
	}
	host := func() [4]float64 {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("host: %v %s", err, out)
		}
		return parse(string(out))
	}
	sandboxed := func() [4]float64 {
		var out, errb bytes.Buffer
		res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, Options{
			Home: dir, Cwd: dir, Env: env, Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("")})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("sandbox: %v %v %s %s", err, res, out.String(), errb.String())
		}
		return parse(out.String())
	}
	host()
	sandboxed()
	var h, s [4]float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hv, sv := host(), sandboxed()
		for k := range h {
			h[k] += hv[k]
			s[k] += sv[k]
		}
	}
	n := float64(b.N)
	b.ReportMetric(h[0]/n/1e6, "direct-MB/s")
	b.ReportMetric(s[0]/n/1e6, "plain-MB/s")
	b.ReportMetric(s[1]/n/1e6, "connect-MB/s")
	b.ReportMetric(s[0]/h[0], "plain/direct")
	b.ReportMetric(s[1]/h[1], "connect/direct")
	b.ReportMetric(h[2]/n*1e3, "direct-200conn-ms")
	b.ReportMetric(s[2]/n*1e3, "plain-200conn-ms")
	b.ReportMetric(s[3]/n*1e3, "connect-200conn-ms")
	b.ReportMetric(s[2]/h[2], "plain-200conn/direct")
	b.ReportMetric(s[3]/h[3], "connect-200conn/direct")
}

// benchServer is an HTTP/1.1 server on loopback that answers /big with
// size bytes from memory (Content-Length, 1 MiB writes) and anything else
// with two, and closes each connection after one answer.
func benchServer(b *testing.B, size int64) string {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				first, err := br.ReadString('\n')
				for err == nil {
					var line string
					if line, err = br.ReadString('\n'); line == "\r\n" {
						break
					}
				}
				if err != nil {
					return
				}
				n := int64(2)
				if strings.Contains(first, "/big ") {
					n = size
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", n)
				for left := n; left > 0; {
					k := min(left, int64(len(chunk)))
					if _, err := c.Write(chunk[:k]); err != nil {
						return
					}
					left -= k
				}
			}()
		}
	}()
	return l.Addr().String()
}
