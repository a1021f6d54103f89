//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
	"srt.dev/internal/teststore"
	"srt.dev/internal/testtls"
)

// storedScript writes the command's token to a storage-like inject host
// (localhost), in a request body and in a metadata header, then reads
// the stored value back in every shape the store offers, with curl and
// with Python, each on a line NAME=VALUE: in Range pieces from the
// inject host, gzipped from the other allowed host of the same store
// (127.0.0.1), split across two responses, base64, in a redirect's
// Location, in an error page (gzipped, from the other host), and its
// metadata as JSON (gzipped, from the other host). Then it sends the
// token in two request headers the store keeps (Idempotency-Key and
// X-Author, names that hold a credential word but carry no credential)
// and reads each back from the other host, in Range pieces and gzipped.
const storedScript = `export NO_PROXY= no_proxy=
H=https://localhost:$PORT O=https://127.0.0.1:$PORT
export H O K
c() { curl -sS "$@"; }
b64url() { python3 -c 'import base64,sys; s=sys.stdin.read().strip(); sys.stdout.write(base64.urlsafe_b64decode(s+"="*(-len(s)%4)).decode("latin-1"))'; }
c -o /dev/null -X PUT --data-binary "$GH_TOKEN" -H "Authorization: Bearer $GH_TOKEN" "$H/o/$K"
c -o /dev/null -X PUT --data-binary x -H "X-Amz-Meta-Token: $GH_TOKEN" "$H/o/$K-m"
echo "stored=$(c "$H/o/$K")"
echo "range=$(c -r 0-9 "$H/o/$K")$(c -r 10-19 "$H/o/$K")$(c -r 20-29 "$H/o/$K")$(c -r 30-39 "$H/o/$K")"
echo "otherhost=$(c --compressed "$O/o/$K")"
echo "split=$(c "$H/o/$K?part=1&of=2")$(c "$H/o/$K?part=2&of=2")"
echo "base64=$(c "$H/o/$K?enc=base64" | base64 -d 2>/dev/null | tr -c '[:alnum:]_-' '?')"
echo "redirect=$(c -o /dev/null -w '%{redirect_url}' "$H/o/$K?redirect=1" | sed 's,.*/view/,,' | b64url | tr -c '[:alnum:]_-' '?')"
echo "errorpage=$(c --compressed "$O/o/$K?version=none")"
echo "metadata=$(c --compressed "$O/meta/$K-m")"
c -o /dev/null -X PUT --data-binary x -H "Idempotency-Key: $GH_TOKEN" -H "X-Author: $GH_TOKEN" "$H/o/$K-h?keep=Idempotency-Key,X-Author"
for n in Idempotency-Key X-Author; do
  echo "$n-range=$(c -r 0-9 "$O/o/$K-h?header=$n")$(c -r 10-19 "$O/o/$K-h?header=$n")$(c -r 20-29 "$O/o/$K-h?header=$n")$(c -r 30- "$O/o/$K-h?header=$n")"
  echo "$n-otherhost=$(c --compressed "$O/o/$K-h?header=$n")"
done
python3 - <<'PY'
import gzip, os, urllib.error, urllib.request
H, O, K = os.environ["H"], os.environ["O"], os.environ["K"]
def get(url, **headers):
    try:
        r = urllib.request.urlopen(urllib.request.Request(url, headers=headers))
    except urllib.error.HTTPError as e:
        r = e
    b = r.read()
    if r.headers.get("Content-Encoding") == "gzip":
        b = gzip.decompress(b)
    return b.decode("latin-1")
print("py-range=" + "".join(get(H + "/o/" + K, Range="bytes=%d-%d" % (i, i + 9)) for i in range(0, 40, 10)))
print("py-otherhost=" + get(O + "/o/" + K, **{"Accept-Encoding": "gzip"}))
for n in ("Idempotency-Key", "X-Author"):
    u = O + "/o/" + K + "-h?header=" + n
    print("py-%s-range=" % n + "".join(get(u, Range="bytes=%d-%s" % (i, "" if i == 30 else i + 9)) for i in range(0, 40, 10)))
    print("py-%s-otherhost=" % n + get(u, **{"Accept-Encoding": "gzip"}))
PY
`

// TestStoredValueReadBack: a masked token that a storage-like inject
// host stores never comes back to the command, however the command reads
// it back. The command PUTs its stand-in in a request body and in a
// metadata header (X-Amz-Meta-Token) to the inject host, then reads the
// object back in pieces (Range), gzipped from another allowed host of
// the same store, split across two responses, base64, in a redirect, in
// an error page and as metadata, with curl and with Python; and sends
// it in two request headers the store keeps (Idempotency-Key, X-Author)
// and reads those back from the other host in Range pieces and gzipped.
//
// By default the real value goes only into the headers that carry
// credentials, so the store holds the stand-in, and every shape reads
// the stand-in; the run records where the stand-in was left. With the
// inject host in bodyInjectHosts the store holds the real value, and
// what the proxy can read it takes out of every response: Range is not
// forwarded, the other host's gzip is decoded, base64 is scrubbed; the
// value split by the server across two responses does come back, as
// docs/tls-and-credentials.md says. The control run, without masking,
// shows that each shape returns what the store holds. As the caller, and
// as nobody when the tests run as root.
func TestStoredValueReadBack(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3")
	store := &teststore.Store{}
	srv, err := testtls.Serve(store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	token := randomAlnum(t, "ghp_", 36)
	bin := srtBin
	users := []int{os.Geteuid()}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	for _, uid := range users {
		for _, mode := range []string{"control", "default", "bodyInjectHosts"} {
			if mode == "control" && uid != os.Geteuid() {
				continue
			}
			t.Run(mode+"/uid="+strconv.Itoa(uid), func(t *testing.T) {
				w := newWorld(t, bin, uid)
				ca := filepath.Join(w.base, "upstream-ca.pem")
				testenv.WriteFile(t, ca, srv.CA.PEM, 0o644)
				network := `"allowedDomains": ["localhost:` + srv.Port + `", "127.0.0.1:` + srv.Port + `"], "deniedDomains": [],
					"tlsTerminate": {"extraCaCertPaths": [` + strconv.Quote(ca) + `]}`
				entry := `{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["localhost"]}`
				if mode == "bodyInjectHosts" {
					entry = `{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["localhost"], "bodyInjectHosts": ["localhost"]}`
				}
				creds := `, "credentials": {"envVars": [` + entry + `]}`
				if mode == "control" {
					creds = ""
				}
				settings := w.write(filepath.Join(w.home, "s.json"), `{"network": {`+network+`}`+creds+`,
					"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
				key := mode + "-" + strconv.Itoa(uid)
				out, errOut := storedRun(t, w, []string{"GH_TOKEN=" + token, "PORT=" + srv.Port, "K=" + key},
					"--settings", settings, "--violations", "--refusals", "always", "-c", storedScript)
				got := map[string]string{}
				for _, l := range strings.Split(out, "\n") {
					if k, v, ok := strings.Cut(l, "="); ok {
						got[k] = v
					}
				}
				stand := got["stored"]
				if mode == "control" {
					stand = token
				}
				if !strings.HasPrefix(stand, "fake_value_") && mode != "control" {
					t.Fatalf("the store holds %q, not the stand-in:\n%s\n%s", stand, out, errOut)
				}
				want := map[string]string{
					"stored":       stand,
					"range":        strings.Repeat(stand, 4), // Range is not forwarded: each piece is the whole
					"otherhost":    stand,
					"split":        stand,
					"base64":       stand,
					"redirect":     stand,
					"errorpage":    "<h1>Not Found</h1><p>object " + key + " holds " + stand + ", but has no version none</p>",
					"metadata":     `{"X-Amz-Meta-Token":"` + stand + `"}`,
					"py-range":     strings.Repeat(stand, 4),
					"py-otherhost": stand,
				}
				for _, n := range []string{"Idempotency-Key", "X-Author"} {
					for _, k := range []string{n + "-range", n + "-otherhost", "py-" + n + "-range", "py-" + n + "-otherhost"} {
						want[k] = stand
						if mode == "bodyInjectHosts" && strings.HasSuffix(k, "-range") {
							// Every host's responses are read whole: Range is
							// not forwarded, so each piece is the whole.
							want[k] = strings.Repeat(stand, 4)
						}
					}
				}
				kept := store.Meta(key + "-h")
				stored, _ := store.Object(key)
				meta := store.Meta(key + "-m")["X-Amz-Meta-Token"]
				switch mode {
				case "control":
					want["range"], want["py-range"] = token, token
					if string(stored) != token || meta != token {
						t.Errorf("control: the store holds %q and %q, not the token", stored, meta)
					}
					if kept["Idempotency-Key"] != token || kept["X-Author"] != token {
						t.Errorf("control: the store keeps %q, not the token", kept)
					}
				case "default":
					if string(stored) != stand || meta != stand {
						t.Errorf("the store holds %q and %q: the real value went into a body or a metadata header", stored, meta)
					}
					if kept["Idempotency-Key"] != stand || kept["X-Author"] != stand {
						t.Errorf("the store keeps %q: the real value went into a header that carries no credential", kept)
					}
					for _, v := range []string{
						"deny credential-inject localhost:" + srv.Port + " (GH_TOKEN: the stand-in was sent in the request body, not the real value)",
						"deny credential-inject localhost:" + srv.Port + " (GH_TOKEN: the stand-in was sent in the X-Amz-Meta-Token header, not the real value)",
						"deny credential-inject localhost:" + srv.Port + " (GH_TOKEN: the stand-in was sent in the Idempotency-Key header, not the real value)",
						"deny credential-inject localhost:" + srv.Port + " (GH_TOKEN: the stand-in was sent in the X-Author header, not the real value)",
						"srt sandbox refused to put the real value of GH_TOKEN in the Idempotency-Key header of a request to localhost:" + srv.Port +
							", a header that carries no credential (a credential word counts only as a whole part of a name, and a name hosts keep as data, such as Idempotency-Key or X-Amz-Meta-*, never carries one) (it sent the stand-in)",
						// The refusal line says what to change, and where.
						"srt sandbox refused to put the real value of GH_TOKEN in the body of a request to localhost:" + srv.Port +
							" (it sent the stand-in): a real value goes only into the request headers that carry credentials (Authorization, Cookie, X-Api-Key, …), since a host may keep anything else and the command could read it back." +
							` If localhost needs the value there, add "localhost" to credentials.envVars[0].bodyInjectHosts in ` + settings + " (whatever that host keeps, the command can then read back).",
					} {
						if !strings.Contains(errOut, v) {
							t.Errorf("no violation %q:\n%s", v, errOut)
						}
					}
				case "bodyInjectHosts":
					if string(stored) != token || meta != token {
						t.Errorf("bodyInjectHosts: the store holds %q and %q, not the token", stored, meta)
					}
					if kept["Idempotency-Key"] != token || kept["X-Author"] != token {
						t.Errorf("bodyInjectHosts: the store keeps %q, not the token", kept)
					}
					// What the opt-in leaves open: a value the server itself
					// cuts into pieces, each no secret on its own.
					want["split"] = token
					// Scrubbed in its encoded form: the first bytes of the
					// stand-in, as long as the token, and what the token's last
					// bits made of the padding.
					if b := got["base64"]; strings.HasPrefix(b, stand[:len(token)-1]) {
						want["base64"] = b
					}
					if b := got["redirect"]; strings.HasPrefix(b, stand[:len(token)-1]) {
						want["redirect"] = b
					}
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
				if mode != "control" {
					leaked := strings.Count(out, token) + strings.Count(errOut, token)
					if mode == "bodyInjectHosts" {
						leaked -= strings.Count(got["split"], token)
					}
					if leaked > 0 {
						t.Errorf("the real token reached the command %d times:\n%s\n%s", leaked, out, errOut)
					}
				}
				if mode != "control" {
					// The inject host got the real token where it belongs.
					put := "PUT localhost:" + srv.Port + " /o/" + key + ` auth="Bearer ` + token + `"`
					if !strings.Contains(strings.Join(store.Seen(), "\n"), put) {
						t.Errorf("the upstream never saw %s:\n%s", put, strings.Join(store.Seen(), "\n"))
					}
				}
			})
		}
	}
}

// storedRun runs srt as w's user with env added, and returns its stdout
// and stderr; it fails the test unless srt exits 0 within two minutes.
func storedRun(t *testing.T, w *world, env []string, args ...string) (string, string) {
	t.Helper()
	testenv.MkdirAll(t, w.run, 0o700)
	w.chown()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := w.command(ctx, w.bin, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("srt: %v\nstdout:\n%s\nstderr:\n%s", err, &out, &errb)
	}
	return out.String(), errb.String()
}
