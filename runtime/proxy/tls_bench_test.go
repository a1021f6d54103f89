package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"testing"
	"time"

	"srt.dev/compiler/policy"
)

// benchBed is an HTTPS upstream on loopback with one wildcard certificate
// for *.test (so that no upstream cost depends on the name), behind a
// proxy that terminates TLS except for opaque.test.
type benchBed struct {
	proxyAddr string
	upAddr    string
	upCA      *CA
	runCA     *CA
	term      *Terminator
	egress    *Egress
}

func newBenchBed(tb testing.TB, handler http.Handler) *benchBed {
	upAddr, upCA := serveUpstream(tb, handler)
	runCA, err := NewCA()
	if err != nil {
		tb.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(upCA.Cert)
	exclude, _ := policy.ParseHostList([]string{"opaque.test"})
	bb := &benchBed{upAddr: upAddr, upCA: upCA, runCA: runCA}
	bb.term = &Terminator{CA: runCA, Roots: roots, Exclude: func() policy.HostList { return exclude },
		MaxTunnels: func() int { return 4096 }}
	bb.egress = tlsEgress(&bb.upAddr, bb.term)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go (&HTTP{Egress: bb.egress}).Serve(context.Background(), pl)
	bb.proxyAddr = pl.Addr().String()
	tb.Cleanup(func() { pl.Close() })
	return bb
}

// client returns an HTTP client through the proxy (or direct to the
// upstream when direct), trusting ca.
func (bb *benchBed) client(ca *CA, direct, keepAlive bool) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		DisableKeepAlives: !keepAlive,
		ForceAttemptHTTP2: false,
	}
	if direct {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", bb.upAddr)
		}
	} else {
		tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("srt", "tok"), Host: bb.proxyAddr})
	}
	return &http.Client{Transport: tr}
}

func fetch(b *testing.B, c *http.Client, u string) int64 {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: %d %v", u, resp.StatusCode, err)
	}
	return n
}

// BenchmarkHTTPSDownload fetches 32 MiB over one kept-alive connection:
// straight to the upstream, through an opaque CONNECT tunnel, through a
// terminated tunnel, and through a terminated tunnel with a masked
// credential (every response body scanned for its real value).
func BenchmarkHTTPSDownload(b *testing.B) {
	const size = 32 << 20
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	bb := newBenchBed(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	for _, c := range []struct {
		name   string
		url    string
		ca     *CA
		direct bool
		secret bool
	}{
		{"direct", "https://big.test/", bb.upCA, true, false},
		{"opaque", "https://opaque.test/", bb.upCA, false, false},
		{"terminated", "https://big.test/", bb.runCA, false, false},
		{"terminated-masked", "https://big.test/", bb.runCA, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			bb.egress.Inject = nil
			if c.secret {
				bb.egress.Inject = &Injector{Secrets: []Secret{{Name: "T", Sentinel: testSentinel, Real: testReal, Inject: func(string) bool { return true }}}}
			}
			cl := bb.client(c.ca, c.direct, true)
			fetch(b, cl, c.url) // the connection, outside the timing
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				fetch(b, cl, c.url)
			}
		})
	}
	bb.egress.Inject = nil
}

// BenchmarkFirstResponse is the time to the first answer on a new
// connection (TCP, CONNECT, TLS, one small request): through an opaque
// tunnel, a terminated one whose leaf is cached, and a terminated one for
// a name never seen (a leaf minted).
func BenchmarkFirstResponse(b *testing.B) {
	bb := newBenchBed(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	b.Run("opaque", func(b *testing.B) {
		cl := bb.client(bb.upCA, false, false)
		for b.Loop() {
			fetch(b, cl, "https://opaque.test/")
		}
	})
	b.Run("terminated-cached-leaf", func(b *testing.B) {
		cl := bb.client(bb.runCA, false, false)
		fetch(b, cl, "https://cached.test/")
		for b.Loop() {
			fetch(b, cl, "https://cached.test/")
		}
	})
	b.Run("terminated-fresh-leaf", func(b *testing.B) {
		cl := bb.client(bb.runCA, false, false)
		i := 0
		for b.Loop() {
			i++
			fetch(b, cl, fmt.Sprintf("https://n%d-%d.test/", time.Now().UnixNano(), i))
		}
	})
}

// BenchmarkIdleTunnelMemory holds 1,000 tunnels open after one request
// each and reports heap and stacks per tunnel: straight to the upstream
// (the baseline: the client's and the upstream's side, which run in this
// process too), through an opaque tunnel and through a terminated one.
// The proxy's share is the difference to the baseline. Run it with
// -benchtime=1x.
func BenchmarkIdleTunnelMemory(b *testing.B) {
	bb := newBenchBed(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	const n = 1000
	for _, c := range []struct {
		name, host string
		ca         *CA
	}{{"direct", "direct.test", bb.upCA}, {"opaque", "opaque.test", bb.upCA}, {"terminated", "idle.test", bb.runCA}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				roots := x509.NewCertPool()
				roots.AddCert(c.ca.Cert)
				ask := func(tc *tls.Conn) error {
					fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", c.host)
					resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
					if err != nil {
						return err
					}
					io.Copy(io.Discard, resp.Body)
					return resp.Body.Close()
				}
				open := func() (*tls.Conn, error) {
					var raw net.Conn
					var err error
					if c.name == "direct" {
						raw, err = net.Dial("tcp", bb.upAddr)
					} else {
						var br *bufio.Reader
						raw, br, err = connectThrough(bb.proxyAddr, c.host+":443")
						if err == nil && br.Buffered() > 0 {
							err = fmt.Errorf("bytes after the CONNECT answer")
						}
					}
					if err != nil {
						return nil, err
					}
					tc := tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: c.host})
					return tc, ask(tc)
				}
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				conns := make([]*tls.Conn, n)
				errs := make(chan error, 8)
				for w := range 8 {
					go func() {
						for i := w; i < n; i += 8 {
							tc, err := open()
							if err != nil {
								errs <- err
								return
							}
							conns[i] = tc
						}
						errs <- nil
					}()
				}
				for range 8 {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
				// On a busy machine opening them all takes longer than
				// the proxy's idle timeout: one more request on each (a
				// new tunnel for any closed since) before measuring.
				for w := range 8 {
					go func() {
						for i := w; i < n; i += 8 {
							if ask(conns[i]) != nil {
								conns[i].Close()
								var err error
								if conns[i], err = open(); err != nil {
									errs <- err
									return
								}
							}
						}
						errs <- nil
					}()
				}
				for range 8 {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				per := (int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)) / n
				b.ReportMetric(float64(per), "B/tunnel")
				b.ReportMetric(float64(bb.term.active.Load()), "terminated-open")
				for _, tc := range conns {
					tc.Close()
				}
			}
		})
	}
}

// BenchmarkScrubBody reads 32 MiB through the response scrubber with one
// masked credential: its value alone (a response of a host no real value
// goes to), and with its re-encoded forms (a response read whole), over
// the download benchmark's body and over base64 text (where the forms'
// first characters are met most often).
func BenchmarkScrubBody(b *testing.B) {
	const size = 32 << 20
	random := make([]byte, size*3/4)
	for i := range random {
		random[i] = byte(i*7919 + i>>8*104729)
	}
	bodies := map[string][]byte{
		"hex-digits": bytes.Repeat([]byte("0123456789abcdef"), size/16),
		"base64":     []byte(base64.StdEncoding.EncodeToString(random)),
	}
	in := &Injector{Secrets: []Secret{{Name: "T", Sentinel: testSentinel, Real: testReal}}}
	for _, name := range []string{"hex-digits", "base64"} {
		for _, every := range []bool{false, true} {
			pairs := in.inbound(every)
			b.Run(fmt.Sprintf("%s/forms=%v", name, every), func(b *testing.B) {
				body := bodies[name]
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					n, err := io.Copy(io.Discard, newSwapReader(io.NopCloser(bytes.NewReader(body)), pairs))
					if err != nil || n != int64(len(body)) {
						b.Fatal(n, err)
					}
				}
			})
		}
	}
}
