// Package secrets finds the secrets of a masked credential (a variable's
// value or a credential file's content) and makes the text the sandboxed
// command sees instead: each secret replaced by a stand-in of its own. The
// proxy swaps each stand-in back for its secret on the way to the hosts the
// credential is meant for, and the secret for the stand-in in responses.
//
// What is secret:
//
//   - by default the whole value (for a file, its content without a final
//     line break, so that `$(cat file)` gives the whole stand-in);
//   - with Extract, an ECMAScript regular expression applied to the whole
//     text, the first group of every match (the rest stays readable);
//   - with Decode policy.DecodeJWT, every JSON Web Token (found by Extract's first
//     group, or by the shape of a token: eyJ….….…) that decodes as one;
//     each is shown as a fake HS256 token whose masked claims are
//     stand-ins. MaskClaims names the claims to mask; without it every
//     claim is masked except the times (exp, nbf, iat), which clients read
//     to decide when to refresh.
//
// A stand-in comes from the caller (the sandbox uses "fake_value_" and a
// random UUID, padded to the secret's length); the same secret gets the same
// stand-in wherever it appears. The package does no I/O.
package secrets

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"

	"srt.dev/compiler/policy"
)

// Spec says what of a credential is secret (policy.Masking).
type Spec struct {
	Extract    string
	Decode     policy.Decoder
	MaskClaims []string
	// Duplicates also replaces a secret where it appears outside the
	// places Extract or Decode found it (maskDuplicates).
	Duplicates bool
	// File keeps a final line break out of a whole-content secret.
	File bool
}

// A Piece is one secret and its stand-in.
type Piece struct {
	Real, StandIn string
}

// Masked is the text the command sees and the secrets it hides, in the
// order they first appear.
type Masked struct {
	Text   string
	Pieces []Piece
}

// ErrNoMatch is returned when Extract or Decode finds no secret: the
// caller applies onExtractNoMatch.
var ErrNoMatch = errors.New("found no secret to mask")

// matchTimeout bounds one search of an Extract expression (a backtracking
// engine: a pathological expression must not hang the start of a run).
const matchTimeout = 2 * time.Second

// jwtShape finds candidate tokens when Decode is "jwt" without Extract: a
// header that starts with `{"` (eyJ in base64url), a payload, a signature.
// It is compiled on first use: srt starts twice a run, and most runs mask
// no token.
var jwtShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
})

// Compile checks an Extract expression: it must compile as ECMAScript and
// have a capturing group.
func Compile(extract string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(extract, regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("extract %q: %w", extract, err)
	}
	if len(re.GetGroupNumbers()) < 2 {
		return nil, fmt.Errorf("extract %q has no capturing group: wrap the secret part in ( )", extract)
	}
	re.MatchTimeout = matchTimeout
	return re, nil
}

type span struct{ start, end int }

// Mask returns text with its secrets replaced. standIn makes the stand-in
// for a secret (called once per distinct secret that is not a token).
func Mask(text string, s Spec, standIn func(real string) (string, error)) (Masked, error) {
	spans, err := find(text, s)
	if err != nil {
		return Masked{}, err
	}
	fakes := map[string]string{}
	var pieces []Piece
	var out strings.Builder
	last := 0
	for _, sp := range spans {
		real := text[sp.start:sp.end]
		fake, ok := fakes[real]
		if !ok {
			if s.Decode == policy.DecodeJWT {
				if fake, ok, err = fakeToken(real, s.MaskClaims, standIn); err != nil {
					return Masked{}, err
				}
				if !ok {
					continue // not a token, or none of the named claims
				}
			} else if fake, err = standIn(real); err != nil {
				return Masked{}, err
			}
			fakes[real] = fake
			pieces = append(pieces, Piece{real, fake})
		}
		out.WriteString(text[last:sp.start])
		out.WriteString(fake)
		last = sp.end
	}
	if len(pieces) == 0 {
		if s.Extract != "" || s.Decode != policy.DecodeNone {
			return Masked{}, ErrNoMatch
		}
		return Masked{Text: text}, nil
	}
	out.WriteString(text[last:])
	masked := out.String()
	if s.Duplicates {
		// Longest first, so that a secret containing another is replaced
		// whole.
		byLen := slices.Clone(pieces)
		sort.SliceStable(byLen, func(i, j int) bool { return len(byLen[i].Real) > len(byLen[j].Real) })
		for _, p := range byLen {
			masked = strings.ReplaceAll(masked, p.Real, p.StandIn)
		}
	}
	return Masked{Text: masked, Pieces: pieces}, nil
}

// find returns the non-overlapping byte ranges of the secrets, in order.
func find(text string, s Spec) ([]span, error) {
	switch s.Decode {
	case policy.DecodeNone, policy.DecodeJWT:
	default:
		return nil, fmt.Errorf("unknown decoder %q", s.Decode)
	}
	switch {
	case s.Extract != "":
		re, err := Compile(s.Extract)
		if err != nil {
			return nil, err
		}
		var spans []span
		m, err := re.FindStringMatch(text)
		for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
			g := m.GroupByNumber(1)
			if g == nil || len(g.Captures) == 0 {
				continue
			}
			i, n := g.ByteRange()
			if n > 0 && (len(spans) == 0 || i >= spans[len(spans)-1].end) {
				spans = append(spans, span{i, i + n})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("extract %q: %w", s.Extract, err)
		}
		return spans, nil
	case s.Decode == policy.DecodeJWT:
		var spans []span
		for _, ix := range jwtShape().FindAllStringIndex(text, -1) {
			spans = append(spans, span{ix[0], ix[1]})
		}
		return spans, nil
	}
	end := len(text)
	if s.File {
		end = len(strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r"))
	}
	if end == 0 {
		return nil, nil
	}
	return []span{{0, end}}, nil
}

// timeClaims stay readable in a token masked whole.
var timeClaims = []string{"exp", "nbf", "iat"}

// fakeToken returns the fake token shown for the JSON Web Token real, or
// false when real is not a token (three base64url parts, a header object
// naming its alg, a payload object) or has none of the claims to mask.
func fakeToken(real string, claims []string, standIn func(string) (string, error)) (string, bool, error) {
	parts := strings.Split(real, ".")
	if len(parts) != 3 {
		return "", false, nil
	}
	var header struct {
		Alg *string `json:"alg"`
	}
	if !decodePart(parts[0], &header) || header.Alg == nil {
		return "", false, nil
	}
	var payload map[string]json.RawMessage
	if !decodePart(parts[1], &payload) || payload == nil {
		return "", false, nil
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", false, nil
	}
	masked := 0
	for name, v := range payload {
		mask := slices.Contains(claims, name)
		if len(claims) == 0 {
			mask = !slices.Contains(timeClaims, name)
		}
		if !mask {
			continue
		}
		value := string(v)
		var str string
		if json.Unmarshal(v, &str) == nil {
			value = str
		}
		fake, err := standIn(value)
		if err != nil {
			return "", false, err
		}
		payload[name], _ = json.Marshal(fake)
		masked++
	}
	if len(claims) > 0 && masked == 0 {
		return "", false, nil
	}
	// A random signature as long as the real one (at least an HS256
	// one): the fake token is unique to the run, and verifies nowhere.
	fakeSig := make([]byte, max(len(sig), 32))
	if _, err := rand.Read(fakeSig); err != nil {
		return "", false, err
	}
	body, err := json.Marshal(payload) // keys sorted: the same bytes for the same claims
	if err != nil {
		return "", false, err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(body) + "." + enc.EncodeToString(fakeSig), true, nil
}

// decodePart decodes one base64url part of a token (padding tolerated)
// as a JSON object into v.
func decodePart(part string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(part, "="))
	return err == nil && bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{")) && json.Unmarshal(raw, v) == nil
}
