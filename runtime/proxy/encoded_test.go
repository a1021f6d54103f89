package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"html"
	"net/url"
	"strings"
	"testing"
)

// TestBase64Inner: the characters of a value's base64 that depend on it
// alone, at each of the three places it may start in a group of three
// bytes; by hand (and Python's base64 module): the base64 of
// "secret-value-123" after 0, 1 and 2 zero bytes is
// c2VjcmV0LXZhbHVlLTEyMw==, AHNlY3JldC12YWx1ZS0xMjM= and
// AABzZWNyZXQtdmFsdWUtMTIz.
func TestBase64Inner(t *testing.T) {
	for align, want := range []string{"c2VjcmV0LXZhbHVlLTEyM", "NlY3JldC12YWx1ZS0xMj", "zZWNyZXQtdmFsdWUtMTIz"} {
		if got := string(base64Inner(base64.StdEncoding, []byte("secret-value-123"), align)); got != want {
			t.Errorf("base64Inner(align %d) = %q, want %q", align, got, want)
		}
	}
}

// encodedSecret has a character of each kind the escapes treat apart.
const encodedSecret = "wJal/rX+Ut n\"F<E>&M'I\\é"

// TestEncodedFormsOfEncoders: the forms the encoders of other languages
// write, by hand from Python 3 (urllib.parse.quote with an empty safe set
// and its default "/", quote_plus, quote with encodeURIComponent's safe set,
// json.dumps with and without ensure_ascii, html.escape), are among the
// forms looked for.
func TestEncodedFormsOfEncoders(t *testing.T) {
	forms := map[string]bool{}
	for _, p := range encodedForms([]byte(encodedSecret), []byte(testSentinel)) {
		forms[string(p.Old)] = true
	}
	for _, want := range []string{
		`wJal%2FrX%2BUt%20n%22F%3CE%3E%26M%27I%5C%C3%A9`,
		`wJal/rX%2BUt%20n%22F%3CE%3E%26M%27I%5C%C3%A9`,
		`wJal%2FrX%2BUt+n%22F%3CE%3E%26M%27I%5C%C3%A9`,
		`wJal%2FrX%2BUt%20n%22F%3CE%3E%26M'I%5C%C3%A9`,
		`wJal%2frX%2bUt%20n%22F%3cE%3e%26M%27I%5c%c3%a9`,
		`wJal/rX+Ut n\"F<E>&M'I\\\u00e9`,
		`wJal/rX+Ut n\"F<E>&M'I\\é`,
		`wJal/rX+Ut n&quot;F&lt;E&gt;&amp;M&#x27;I\é`,
		`WJAL/RX+UT N"F<E>&M'I\É`,
		`wjal/rx+ut n"f<e>&m'i\é`,
	} {
		if !forms[want] {
			t.Errorf("%q is not among the forms looked for", want)
		}
	}
	if forms[encodedSecret] {
		t.Errorf("the value itself is among its encoded forms (the plain pair finds it)")
	}
}

// TestEncodedFormsScrubbed: a value that Go's encoders wrote into a
// longer text (base64 at each offset, in both alphabets, padded or not;
// hex; %-escapes; JSON; HTML and XML) does not come back from the
// scrubber, in its form or decoded, and what surrounds it is kept. In
// base64 the characters at the two ends of the value also hold bits of
// its neighbours, and stay: the stand-in's first byte may come back with
// a few bits of the value's.
func TestEncodedFormsScrubbed(t *testing.T) {
	in := &Injector{Secrets: []Secret{{Name: "T", Sentinel: testSentinel, Real: encodedSecret}}}
	pairs := in.inbound(true)
	real := []byte(encodedSecret)
	jsonText, _ := json.Marshal(encodedSecret)
	var xmlText bytes.Buffer
	xml.EscapeText(&xmlText, real)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		for off := range 3 {
			lead := bytes.Repeat([]byte("x"), off)
			text := []byte(enc.EncodeToString(append(append(lead, real...), "tail of the file"...)))
			got := replaceAll(text, pairs)
			dec, err := enc.DecodeString(string(got))
			if err != nil || bytes.Contains(dec, real) || !bytes.HasSuffix(dec, []byte("tail of the file")) || !bytes.Contains(dec, []byte(testSentinel[1:16])) {
				t.Errorf("base64 at offset %d: %q decodes to %q, %v", off, got, dec, err)
			}
		}
	}
	for _, text := range []string{
		"v=" + hex.EncodeToString(real) + "&more",
		"v=" + strings.ToUpper(hex.EncodeToString(real)) + "&more",
		"/view?v=" + url.QueryEscape(encodedSecret) + "&more",
		"/view/" + url.PathEscape(encodedSecret) + "/more",
		`{"v":` + string(jsonText) + `,"more":1}`,
		"<p>" + html.EscapeString(encodedSecret) + "</p>",
		"<v>" + xmlText.String() + "</v>",
	} {
		got := string(replaceAll([]byte(text), pairs))
		if strings.Contains(got, encodedSecret) || got == text || !strings.Contains(got, "more") && !strings.Contains(got, "</") {
			t.Errorf("%q scrubbed to %q", text, got)
		}
		if h, ok := strings.CutPrefix(got, "v="); ok {
			b, _ := hex.DecodeString(strings.TrimSuffix(h, "&more"))
			if bytes.Contains(b, real) || !bytes.HasPrefix(b, []byte(testSentinel[:len(real)])) {
				t.Errorf("%q scrubbed to %q, which decodes to %q", text, got, b)
			}
		}
	}
}
