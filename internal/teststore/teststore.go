// Package teststore is a storage-like HTTP upstream for tests: what a
// paste service, an object store, an issue tracker or a gist service
// does with a value a command writes, and every way it may hand the value
// back. It is the server the tests of masked credentials read a stored
// value back from (docs/tls-and-credentials.md): a value the proxy
// swapped into a request it stores can be read back in pieces, encoded,
// from another host name of the same service, in a redirect, in an error
// page or in its metadata.
//
// Every host name the server is reached by serves the same store, as a
// service's API host and its CDN or raw-content host do.
//
//   - PUT /o/KEY stores the request body as it arrived, and the value of
//     each metadata header (X-Amz-Meta-*, X-Goog-Meta-*, X-Ms-Meta-*, …:
//     every header whose name has a "meta" segment); 201. With
//     keep=NAME,… it also keeps the request headers named (any name:
//     what a payment API keeps of an Idempotency-Key, a message queue of
//     its custom headers), and with keep=* every request header, as a
//     request inspector does.
//   - GET /o/KEY returns the stored body: with Range (a single range or
//     several, If-Range) as net/http's ServeContent answers it (206);
//     without Range, gzipped when the request accepts gzip. Its query
//     picks another shape:
//     part=N&of=M returns the Nth of M pieces of about equal length (the
//     value split across responses with no Range in sight);
//     enc=base64|base64url|hex|HEX|url|json|upper returns the body
//     encoded so (json: a JSON object {"value": …});
//     redirect=1 answers 302 with the body, base64url, in the Location
//     header;
//     version=… answers 404 with an error page that quotes the body (an
//     error page that echoes what it found), gzipped when accepted;
//     header=NAME returns the value kept of the request header NAME as
//     the body, with Range or gzipped as the object is.
//     Every GET of an object answers with its metadata and kept headers
//     as response headers.
//   - GET /meta/KEY returns the stored metadata and kept headers as a
//     JSON object (gzipped when accepted).
//
// Seen lists what each request carried, for the tests' assertions on
// what the upstream received.
package teststore

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Store is the upstream. The zero value is ready.
type Store struct {
	mu      sync.Mutex
	objects map[string][]byte
	meta    map[string]map[string]string
	seen    []string
}

// Object returns the stored body of key.
func (s *Store) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.objects[key]
	return b, ok
}

// Meta returns the stored metadata and kept headers of key, by
// canonical header name.
func (s *Store) Meta(key string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.meta[key] {
		out[k] = v
	}
	return out
}

// Seen lists each request the store received: "METHOD HOST PATH?QUERY
// auth=… range=… ae=…", in order.
func (s *Store) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// isMeta reports whether a header name has a "meta" segment
// (X-Amz-Meta-Note, X-Object-Meta-Color).
func isMeta(name string) bool {
	for _, seg := range strings.Split(strings.ToLower(name), "-") {
		if seg == "meta" {
			return true
		}
	}
	return false
}

func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, fmt.Sprintf("%s %s %s auth=%q range=%q ae=%q", r.Method, r.Host, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Range"), r.Header.Get("Accept-Encoding")))
	s.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/o/") && r.Method == http.MethodPut:
		s.put(w, r, strings.TrimPrefix(r.URL.Path, "/o/"))
	case strings.HasPrefix(r.URL.Path, "/o/") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.get(w, r, strings.TrimPrefix(r.URL.Path, "/o/"))
	case strings.HasPrefix(r.URL.Path, "/meta/") && r.Method == http.MethodGet:
		b, _ := json.Marshal(s.Meta(strings.TrimPrefix(r.URL.Path, "/meta/")))
		w.Header().Set("Content-Type", "application/json")
		maybeGzip(w, r, http.StatusOK, b)
	default:
		http.Error(w, "no such route", http.StatusNotFound)
	}
}

func (s *Store) put(w http.ResponseWriter, r *http.Request, key string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	keep := map[string]bool{}
	for _, name := range strings.Split(r.URL.Query().Get("keep"), ",") {
		keep[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
	}
	meta := map[string]string{}
	for name, vs := range r.Header {
		if isMeta(name) || keep[name] || keep["*"] {
			meta[name] = strings.Join(vs, ",")
		}
	}
	s.mu.Lock()
	if s.objects == nil {
		s.objects, s.meta = map[string][]byte{}, map[string]map[string]string{}
	}
	s.objects[key], s.meta[key] = body, meta
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "stored %d bytes\n", len(body))
}

func (s *Store) get(w http.ResponseWriter, r *http.Request, key string) {
	body, ok := s.Object(key)
	if !ok {
		http.Error(w, "no such object", http.StatusNotFound)
		return
	}
	for name, v := range s.Meta(key) {
		w.Header().Set(name, v)
	}
	q := r.URL.Query()
	switch {
	case q.Get("of") != "":
		n, _ := strconv.Atoi(q.Get("part"))
		m, _ := strconv.Atoi(q.Get("of"))
		if m < 1 || n < 1 || n > m {
			http.Error(w, "bad part", http.StatusBadRequest)
			return
		}
		size := (len(body) + m - 1) / m
		w.Write(body[min((n-1)*size, len(body)):min(n*size, len(body))])
	case q.Get("enc") != "":
		b, err := Encode(q.Get("enc"), body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	case q.Has("header"):
		v, ok := s.Meta(key)[http.CanonicalHeaderKey(q.Get("header"))]
		if !ok {
			http.Error(w, "no such header kept", http.StatusNotFound)
			return
		}
		serveBody(w, r, []byte(v))
	case q.Get("redirect") != "":
		http.Redirect(w, r, "/view/"+base64.RawURLEncoding.EncodeToString(body), http.StatusFound)
	case q.Has("version"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		maybeGzip(w, r, http.StatusNotFound, []byte("<h1>Not Found</h1><p>object "+key+" holds "+string(body)+", but has no version "+q.Get("version")+"</p>\n"))
	default:
		serveBody(w, r, body)
	}
}

// serveBody writes b: with Range (a single range or several, If-Range)
// as net/http's ServeContent answers it; without Range, gzipped when the
// request accepts gzip.
func serveBody(w http.ResponseWriter, r *http.Request, b []byte) {
	if r.Header.Get("Range") == "" && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		maybeGzip(w, r, http.StatusOK, b)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(b))
}

// maybeGzip writes b with status, gzipped when the request accepts gzip.
func maybeGzip(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.WriteHeader(status)
		w.Write(b)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	gz := gzip.NewWriter(w)
	gz.Write(b)
	gz.Close()
}

// Encodings are the names Encode knows, sorted.
func Encodings() []string {
	var out []string
	for k := range encoders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var encoders = map[string]func([]byte) []byte{
	"base64":    func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) },
	"base64url": func(b []byte) []byte { return []byte(base64.RawURLEncoding.EncodeToString(b)) },
	"hex":       func(b []byte) []byte { return []byte(hex.EncodeToString(b)) },
	"HEX":       func(b []byte) []byte { return []byte(strings.ToUpper(hex.EncodeToString(b))) },
	"url":       func(b []byte) []byte { return []byte(url.QueryEscape(string(b))) },
	"json": func(b []byte) []byte {
		out, _ := json.Marshal(map[string]string{"value": string(b)})
		return out
	},
	"upper": bytes.ToUpper,
}

// Encode returns b in the encoding named enc (see Encodings).
func Encode(enc string, b []byte) ([]byte, error) {
	f, ok := encoders[enc]
	if !ok {
		return nil, fmt.Errorf("no encoding %q", enc)
	}
	return f(b), nil
}
