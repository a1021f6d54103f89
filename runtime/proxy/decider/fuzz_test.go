package decider

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzVerdict reads frames from arbitrary bytes and parses them as
// verdicts: nothing may panic, and a verdict accepted once is accepted
// again, unchanged, after a round trip through its own encoding.
func FuzzVerdict(f *testing.F) {
	for _, s := range []string{
		`{"t":"verdict","id":1,"action":"allow","setHeaders":{"x-a":"1"},"removeHeaders":["cookie"],"cred":"github","credential":"t"}`,
		`{"t":"verdict","id":2,"action":"deny","status":451,"reason":"not here"}`,
		`{"t":"verdict","id":3,"action":"need_body","max":10}`,
		`{"t":"verdict","id":1,"id":1}`, `{"a":[{"b":null}]}`,
	} {
		f.Add(AppendFrame(nil, []byte(s)))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			b, err := ReadFrame(r, 1<<16)
			if err != nil {
				return
			}
			v, err := ParseVerdict(b)
			if err != nil {
				continue
			}
			again, _ := json.Marshal(v)
			w, err := ParseVerdict(again)
			if err != nil {
				t.Fatalf("%s accepted, its re-encoding %s refused: %v", b, again, err)
			}
			if a, b := json.Marshal(w); string(a) != string(again) || b != nil {
				t.Fatalf("round trip changed %s into %s", again, a)
			}
			ParseHello(b)
		}
	})
}
