package decider

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRoundTrip is the latency a verdict adds to a request: one req
// frame out and one verdict back, over a loopback socket, with a decider
// that allows at once.
func BenchmarkRoundTrip(b *testing.B) {
	t := &testing.T{}
	l, d := fakeDecider(t, `{"t":"hello","proto":1,"allowedDomains":["example.com"]}`)
	go func() {
		for {
			f, err := ReadFrame(d, MaxFrame)
			if err != nil {
				return
			}
			r, _ := ParseReq(f)
			WriteFrame(d, []byte(fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow"}`, r.ID)))
		}
	}()
	req := Req{Method: "GET", Host: "example.com", Port: 443, HostHeader: "example.com", Path: "/x", Headers: map[string][]string{"accept": {"*/*"}, "user-agent": {"curl/8"}}}
	b.ResetTimer()
	for range b.N {
		if _, err := l.Ask(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
