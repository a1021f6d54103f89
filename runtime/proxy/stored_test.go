package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"srt.dev/internal/teststore"
)

// storedSecret is a value with a character of each kind the escapes
// treat apart (an AWS secret key has / and +), of 40 bytes: its stand-in
// (testSentinel, 48) is longer, as a real stand-in of a short value is.
const storedSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY&<k>\"y'\\z"

// storeBed is teststore's store behind a terminating proxy, with one
// secret, TOKEN (storedSecret), injected into store.test and, with body
// set, into its bodies too; cdn.test is another allowed host of the same
// store, as a service's raw-content host is.
//
// /partial answers 206 with the first bytes of the secret, whatever the
// request asked.
func storeBed(t *testing.T, body bool) (*tlsbed, *teststore.Store) {
	store := &teststore.Store{}
	tb := newTLSBed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/partial" {
			store.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Range", "bytes 0-9/40")
		w.WriteHeader(http.StatusPartialContent)
		io.WriteString(w, storedSecret[:10])
	}))
	tb.inject.Secrets = []Secret{{Name: "TOKEN", Setting: "credentials.envVars[0]", Sentinel: testSentinel, Real: storedSecret,
		Inject: func(h string) bool { return h == "store.test" }}}
	if body {
		tb.inject.Secrets[0].BodyInject = func(h string) bool { return h == "store.test" }
	}
	return tb, store
}

// send sends method url with body (none when "") and the headers, and
// returns the response with its body as the client got it (nothing
// decoded).
func send(t *testing.T, tb *tlsbed, method, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, r)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := tb.rawClient(false)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return do(t, c, req)
}

// TestStoredReadBack: a value a storage-like inject host keeps comes
// back to the command in none of the shapes the store offers. By default
// the body and the metadata header carry the stand-in, so the store
// never holds the real value. With bodyInjectHosts it does, and every
// response, from any host, is read whole: Range is not forwarded (the
// store sends the whole body), gzip from the other host is decoded, and
// the value is taken out base64, hex, %-escaped, JSON-escaped and
// upper-cased, in bodies and in a redirect's Location.
func TestStoredReadBack(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		tb, store := storeBed(t, false)
		send(t, tb, "PUT", "https://store.test/o/k", testSentinel, "Authorization", "Bearer "+testSentinel)
		send(t, tb, "PUT", "https://store.test/o/m", "x", "X-Amz-Meta-Token", testSentinel)
		if b, _ := store.Object("k"); string(b) != testSentinel {
			t.Errorf("the store holds %q, want the stand-in", b)
		}
		if m := store.Meta("m")["X-Amz-Meta-Token"]; m != testSentinel {
			t.Errorf("the store keeps the metadata %q, want the stand-in", m)
		}
		if seen := store.Seen(); !strings.Contains(seen[0], "auth="+strconv.Quote("Bearer "+storedSecret)) {
			t.Errorf("the store received %q, want the real value in Authorization", seen[0])
		}
		// The other host is not read whole: its gzip reaches the client.
		resp, raw := send(t, tb, "GET", "https://cdn.test/o/k", "", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" || uncompress(t, resp.Header, raw) != testSentinel {
			t.Errorf("cdn.test: %s %q", resp.Header.Get("Content-Encoding"), raw)
		}
		// The inject host is: Range does not reach it.
		resp, raw = send(t, tb, "GET", "https://store.test/o/k", "", "Range", "bytes=0-9")
		if resp.StatusCode != 200 || raw != testSentinel {
			t.Errorf("Range to the inject host: %d %q, want 200 and the whole body", resp.StatusCode, raw)
		}
		var lines []string
		for _, ev := range tb.refusals() {
			lines = append(lines, ev.Line())
		}
		want := "deny credential-inject store.test:443 (TOKEN: the stand-in was sent in the request body, not the real value)\n" +
			"deny credential-inject store.test:443 (TOKEN: the stand-in was sent in the X-Amz-Meta-Token header, not the real value)"
		if strings.Join(lines, "\n") != want {
			t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(lines, "\n"), want)
		}
	})

	t.Run("bodyInjectHosts", func(t *testing.T) {
		tb, store := storeBed(t, true)
		send(t, tb, "PUT", "https://store.test/o/k", testSentinel)
		send(t, tb, "PUT", "https://store.test/o/m", "x", "X-Amz-Meta-Token", testSentinel)
		if b, _ := store.Object("k"); string(b) != storedSecret {
			t.Fatalf("the store holds %q, want the real value (else nothing is tested)", b)
		}
		if len(tb.refusals()) != 0 {
			t.Errorf("recorded %v, want nothing", tb.refusals())
		}
		real := []byte(storedSecret)
		for _, host := range []string{"store.test", "cdn.test"} {
			before := len(store.Seen())
			resp, raw := send(t, tb, "GET", "https://"+host+"/o/k", "", "Range", "bytes=0-9", "Accept-Encoding", "gzip")
			if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || raw != testSentinel {
				t.Errorf("%s, Range and gzip: %d %q %q, want 200 and the whole stand-in, unencoded", host, resp.StatusCode, resp.Header.Get("Content-Encoding"), raw)
			}
			if seen := store.Seen()[before:]; len(seen) != 1 || !strings.HasSuffix(seen[0], `range="" ae="identity"`) {
				t.Errorf("%s: the store received %q", host, seen)
			}
			for _, enc := range teststore.Encodings() {
				_, raw := send(t, tb, "GET", "https://"+host+"/o/k?enc="+enc, "")
				form, _ := teststore.Encode(enc, real)
				dec := []byte(raw)
				switch enc {
				case "base64":
					dec, _ = base64.StdEncoding.DecodeString(raw)
				case "base64url":
					dec, _ = base64.RawURLEncoding.DecodeString(raw)
				case "hex", "HEX":
					dec, _ = hex.DecodeString(raw)
				}
				if strings.Contains(raw, string(form)) || bytes.Contains(dec, real) || !strings.Contains(string(dec), testSentinel[1:20]) && !strings.Contains(strings.ToLower(string(dec)), testSentinel[1:20]) {
					t.Errorf("%s, enc=%s: %q (decoded %q)", host, enc, raw, dec)
				}
			}
			resp, _ = send(t, tb, "GET", "https://"+host+"/o/k?redirect=1", "")
			if loc := resp.Header.Get("Location"); resp.StatusCode != 302 || strings.Contains(loc, base64.RawURLEncoding.EncodeToString(real)[2:40]) {
				t.Errorf("%s redirect: %d %q", host, resp.StatusCode, loc)
			}
			resp, raw = send(t, tb, "GET", "https://"+host+"/o/k?version=none", "", "Accept-Encoding", "gzip")
			if resp.StatusCode != 404 || !strings.Contains(raw, "holds "+testSentinel+",") {
				t.Errorf("%s error page: %d %q", host, resp.StatusCode, raw)
			}
			_, raw = send(t, tb, "GET", "https://"+host+"/meta/m", "", "Accept-Encoding", "gzip")
			if raw != `{"X-Amz-Meta-Token":"`+testSentinel+`"}` {
				t.Errorf("%s metadata: %q", host, raw)
			}
		}
	})
}

// TestPartialRefused: a partial response (206) from a host whose
// responses are read whole is refused, even when nothing asked for a
// range: a piece of a stored value is no value the scrubber knows.
// Control: from another host, with nothing stored, it passes.
func TestPartialRefused(t *testing.T) {
	for _, body := range []bool{false, true} {
		tb, _ := storeBed(t, body)
		for _, tc := range []struct {
			host   string
			status int
		}{{"store.test", 502}, {"cdn.test", map[bool]int{false: 206, true: 502}[body]}} {
			resp, raw := send(t, tb, "GET", "https://"+tc.host+"/partial", "")
			if resp.StatusCode != tc.status {
				t.Errorf("bodyInjectHosts %v, %s: %d %q, want %d", body, tc.host, resp.StatusCode, raw, tc.status)
			}
			if tc.status == 502 && (resp.Header.Get("X-Proxy-Error") != "partial-content-refused" || !strings.Contains(raw, "206 Partial Content")) {
				t.Errorf("bodyInjectHosts %v, %s: X-Proxy-Error %q, body %q", body, tc.host, resp.Header.Get("X-Proxy-Error"), raw)
			}
		}
	}
}

// TestStoredHeaderReadBack: a request header the host keeps, whatever
// credential word its name holds, carries the stand-in by default, so
// reading it back from the other host in Range pieces or gzipped, or in
// the object's response headers, gives the stand-in; the run records
// where the stand-in was left. Control: Authorization, which carries
// credentials, is kept with the real value by a host that keeps it (a
// request inspector: such a host must not be an inject host).
func TestStoredHeaderReadBack(t *testing.T) {
	tb, store := storeBed(t, false)
	for _, name := range []string{
		"Idempotency-Key", "X-Idempotency-Key", "I-Twilio-Idempotency-Token", "X-Author", "X-Keywords",
		"X-Tokenizer", "X-Session-Name", "X-Request-Id", "X-Correlation-Id", "Slug", "Content-Disposition", "X-Meta-Token",
	} {
		key := "h-" + name
		send(t, tb, "PUT", "https://store.test/o/"+key+"?keep="+name, "x", name, testSentinel)
		if got := store.Meta(key)[name]; got != testSentinel {
			t.Errorf("%s: the store keeps %q, want the stand-in", name, got)
		}
		var pieces string
		for _, r := range []string{"0-9", "10-19", "20-29", "30-"} {
			_, raw := send(t, tb, "GET", "https://cdn.test/o/"+key+"?header="+name, "", "Range", "bytes="+r)
			pieces += raw
		}
		resp, raw := send(t, tb, "GET", "https://cdn.test/o/"+key+"?header="+name, "", "Accept-Encoding", "gzip")
		if got := uncompress(t, resp.Header, raw); pieces != testSentinel || got != testSentinel || resp.Header.Get(name) != testSentinel {
			t.Errorf("%s read back from cdn.test: in pieces %q, gzipped %q, in the header %q; want the stand-in", name, pieces, got, resp.Header.Get(name))
		}
		want := "deny credential-inject store.test:443 (TOKEN: the stand-in was sent in the " + name + " header, not the real value)"
		evs := tb.refusals()
		if len(evs) == 0 || evs[len(evs)-1].Line() != want {
			t.Errorf("%s: recorded %v, want %q last", name, evs, want)
			continue
		}
		// The refusal line says why this name carries no credential.
		why := "srt sandbox refused to put the real value of TOKEN in the " + name + " header of a request to store.test:443, " +
			"a header that carries no credential (a credential word counts only as a whole part of a name, and a name hosts keep as data, " +
			"such as Idempotency-Key or X-Amz-Meta-*, never carries one) (it sent the stand-in): a real value goes only into"
		if got := evs[len(evs)-1].Why; !strings.HasPrefix(got, why) {
			t.Errorf("%s: refusal line %q, want it to begin %q", name, got, why)
		}
	}
	send(t, tb, "PUT", "https://store.test/o/auth?keep=Authorization", "x", "Authorization", "Bearer "+testSentinel)
	if got := store.Meta("auth")["Authorization"]; got != "Bearer "+storedSecret {
		t.Errorf("control: the store keeps Authorization %q, want the real value", got)
	}
}
