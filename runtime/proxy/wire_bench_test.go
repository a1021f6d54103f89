//go:build unix

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// The wire benchmarks compare the proxies with the floor: the same client
// talking to the same server directly. Each iteration runs every way one
// after the other, so that they share the machine's load, and reports
// the ratios to direct of the same iteration:
//
//	go test ./runtime/proxy -run '^$' -bench Wire -benchtime 5x

// wireServer is an HTTP/1.1 server on loopback that answers every
// request with size bytes (Content-Length) from memory, in 1 MiB writes,
// and closes the connection: nothing of net/http's in the way.
func wireServer(tb testing.TB, size int64) (addr string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
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
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", size)
				for left := size; left > 0; {
					n := min(left, int64(len(chunk)))
					if _, err := c.Write(chunk[:n]); err != nil {
						return
					}
					left -= n
				}
			}()
		}
	}()
	return l.Addr().String()
}

// wireProxies serves the HTTP and SOCKS proxies with a policy that allows
// target (host:port) and returns their addresses.
func wireProxies(tb testing.TB, target string) (httpAddr, socksAddr string) {
	allowed, err := policy.ParseHostList([]string{target})
	if err != nil {
		tb.Fatal(err)
	}
	rules := &netpolicy.Rules{Allowed: allowed}
	e := &Egress{Token: "tok", Rules: func() *netpolicy.Rules { return rules }}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { hl.Close(); sl.Close() })
	go (&HTTP{Egress: e}).Serve(context.Background(), hl)
	go (&SOCKS{Egress: e}).Serve(context.Background(), sl)
	return hl.Addr().String(), sl.Addr().String()
}

// wireGet fetches one response of size bytes over a new connection, the
// way named: "direct", "plain" (an absolute-form request to the HTTP
// proxy), "connect" (a CONNECT tunnel) or "socks".
func wireGet(way, target, httpAddr, socksAddr string, size int64, buf []byte) error {
	var c net.Conn
	var err error
	var br *bufio.Reader
	path := "/"
	switch way {
	case "direct":
		c, err = net.Dial("tcp", target)
	case "plain":
		c, err = net.Dial("tcp", httpAddr)
		path = "http://" + target + "/"
	case "connect":
		c, br, err = connectThrough(httpAddr, target)
	case "socks":
		c, err = socksConnect(socksAddr, target)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if br == nil {
		br = bufio.NewReaderSize(c, 64<<10)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n", path, target)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || resp.ContentLength != size {
		return fmt.Errorf("%s: %s, %d bytes", way, resp.Status, resp.ContentLength)
	}
	var n int64
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if n != size {
		return fmt.Errorf("%s: %d of %d bytes", way, n, size)
	}
	return nil
}

var wireWays = []string{"direct", "plain", "connect", "socks"}

// wireRun measures every way, interleaved, and reports each way's mean
// and its ratio to direct's, and the ratio of the CPU time this process
// (client, proxy and server) spent on it to direct's: on a machine
// shared with other work the wall-clock figures move with the load, the
// CPU figures much less.
func wireRun(b *testing.B, unit string, measure func(way string) (float64, error)) {
	sums, cpu := map[string]float64{}, map[string]time.Duration{}
	for _, w := range wireWays {
		if _, err := measure(w); err != nil { // warm up
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range wireWays {
			c0 := cpuTime()
			v, err := measure(w)
			if err != nil {
				b.Fatal(err)
			}
			cpu[w] += cpuTime() - c0
			sums[w] += v
		}
	}
	for _, w := range wireWays {
		b.ReportMetric(sums[w]/float64(b.N), w+"-"+unit)
		if w != "direct" {
			b.ReportMetric(sums[w]/sums["direct"], w+"/direct")
			b.ReportMetric(float64(cpu[w])/float64(cpu["direct"]), w+"-cpu/direct")
		}
	}
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWire512MiB downloads 512 MiB over one new connection each
// way: MB/s, and the ratio to direct (1 is the floor's speed).
func BenchmarkWire512MiB(b *testing.B) {
	const size = 512 << 20
	target := wireServer(b, size)
	httpAddr, socksAddr := wireProxies(b, target)
	buf := make([]byte, 256<<10)
	wireRun(b, "MB/s", func(way string) (float64, error) {
		start := time.Now()
		err := wireGet(way, target, httpAddr, socksAddr, size, buf)
		return float64(size) / 1e6 / time.Since(start).Seconds(), err
	})
}

// BenchmarkWireConnections200 makes 200 sequential new connections with
// one small request each: ms per 200, and the ratio to direct (1 is the
// floor's time).
func BenchmarkWireConnections200(b *testing.B) {
	target := wireServer(b, 2)
	httpAddr, socksAddr := wireProxies(b, target)
	buf := make([]byte, 4096)
	wireRun(b, "ms", func(way string) (float64, error) {
		start := time.Now()
		for range 200 {
			if err := wireGet(way, target, httpAddr, socksAddr, 2, buf); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(start)) / 1e6, nil
	})
}

// BenchmarkWireCopy moves 256 MiB from a sender to a reader in this
// process, directly and through a middle that copies between two
// loopback connections: by splice (io.Copy between *net.TCPConn) or with
// a pump (pump.go). It reports MB/s and the CPU time of the whole
// process (sender, middle, reader) as a ratio to direct's: the middle's
// own cost is the ratio less one.
func BenchmarkWireCopy(b *testing.B) {
	const size = 256 << 20
	pair := func() (net.Conn, net.Conn) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			b.Fatal(err)
		}
		return c, s
	}
	chunk := make([]byte, 1<<20)
	buf := make([]byte, 256<<10)
	measure := func(way string) (float64, error) {
		src, in := pair()
		sink := in
		var out net.Conn
		if way != "direct" {
			out, sink = pair()
		}
		defer src.Close()
		defer in.Close()
		defer sink.Close()
		start := time.Now()
		go func() {
			for left := size; left > 0; left -= len(chunk) {
				src.Write(chunk)
			}
			src.Close()
		}()
		switch way {
		case "splice":
			go func() { io.Copy(out, in); out.Close() }()
		case "pump":
			go func() { newPump(out, in).run(); out.Close() }()
		}
		n := 0
		for {
			k, err := sink.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
		if n != size {
			return 0, fmt.Errorf("%s: %d bytes", way, n)
		}
		return size / 1e6 / time.Since(start).Seconds(), nil
	}
	saved := wireWays
	wireWays = []string{"direct", "splice", "pump"}
	defer func() { wireWays = saved }()
	wireRun(b, "MB/s", measure)
}
