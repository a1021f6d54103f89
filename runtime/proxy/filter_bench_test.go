package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkProxyFilter compares requests per second straight to a
// loopback upstream with the same requests through the filtered proxy,
// whose decider (in this process, over a loopback socket) allows all; 1
// and 50 clients, each on its own keep-alive connection.
func BenchmarkProxyFilter(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	t := &testing.T{}
	bed := newFilterBed(t, helloLocal, nil, verdictFor(`"action":"allow"`))
	for _, clients := range []int{1, 50} {
		for _, via := range []string{"direct", "proxy"} {
			b.Run(fmt.Sprintf("clients=%d/%s", clients, via), func(b *testing.B) {
				tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
				if via == "proxy" {
					tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: bed.addr})
				}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr}
				var wg sync.WaitGroup
				var failed sync.Once
				start := time.Now()
				b.ResetTimer()
				for c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := c; i < b.N; i += clients {
							resp, err := client.Get(up.URL + "/r?i=" + strconv.Itoa(i))
							if err == nil {
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
							}
							if err != nil || resp.StatusCode != 200 {
								failed.Do(func() { b.Errorf("request %d: %v", i, err) })
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			})
		}
	}
}
