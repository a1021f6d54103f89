// Package policytest reads policy test files and checks their assertions
// statically against a compiled policy, on each target (review/query).
//
// A test file sits next to the settings (.srt-settings.json →
// .srt-settings.test). One assertion per line; "#" starts a comment:
//
//	read ~/.ssh/id_rsa: deny
//	write ./src/x: allow
//	connect github.com:443: allow
//	[macos] unix-socket /var/run/docker.sock: deny
//	[linux,windows] read ~/.aws/credentials: allow
//
// The verbs are read, write, connect (host[:port], 443 when omitted) and
// unix-socket; the verdict after the last ": " is allow or deny. An
// optional [targets] prefix limits the assertion to some targets;
// without it, it must hold on every target tested.
package policytest

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"srt.dev/review/query"
)

// An Assertion is one line of a test file.
type Assertion struct {
	Pos     string         `json:"pos"` // file:line
	Targets []query.Target `json:"targets,omitempty"`
	Verb    string         `json:"verb"`
	Subject string         `json:"subject"`
	Allow   bool           `json:"allow"`
	Text    string         `json:"text"`
}

// Verbs are the questions a test can ask.
var Verbs = []string{"read", "write", "connect", "unix-socket"}

// Parse reads a test file. Every malformed line is reported, each with its
// file:line and what to write instead.
func Parse(name string, data []byte) ([]Assertion, error) {
	var out []Assertion
	var errs []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		a, err := parseLine(line)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %v", name, n, err))
			continue
		}
		a.Pos = fmt.Sprintf("%s:%d", name, n)
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if errs != nil {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

func parseLine(line string) (Assertion, error) {
	a := Assertion{Text: line}
	rest := line
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return a, fmt.Errorf("unclosed [targets]: write [linux,macos] before the verb")
		}
		ts, err := query.ParseTargets(rest[1:end])
		if err != nil {
			return a, err
		}
		a.Targets, rest = ts, strings.TrimSpace(rest[end+1:])
	}
	i := strings.LastIndex(rest, ": ")
	if i < 0 {
		return a, fmt.Errorf("no verdict: end the line with \": allow\" or \": deny\"")
	}
	switch v := strings.TrimSpace(rest[i+2:]); v {
	case "allow":
		a.Allow = true
	case "deny":
	default:
		return a, fmt.Errorf("verdict %q: write allow or deny", v)
	}
	verb, subject, ok := strings.Cut(strings.TrimSpace(rest[:i]), " ")
	subject = strings.TrimSpace(subject)
	if !ok || subject == "" {
		return a, fmt.Errorf("expected VERB SUBJECT: VERDICT, e.g. \"read ~/.ssh/id_rsa: deny\"")
	}
	known := false
	for _, v := range Verbs {
		known = known || v == verb
	}
	if !known {
		return a, fmt.Errorf("unknown verb %q: use %s", verb, strings.Join(Verbs, ", "))
	}
	if verb == "connect" {
		if _, _, err := query.SplitHostPort(subject); err != nil {
			return a, err
		}
	}
	a.Verb, a.Subject = verb, subject
	return a, nil
}

// A Result is one assertion checked on one target.
type Result struct {
	Assertion
	Target query.Target   `json:"target"`
	Got    query.Decision `json:"got"`
	Pass   bool           `json:"pass"`
}

// Run checks every assertion on each of targets it applies to.
func Run(e *query.Evaluator, as []Assertion, targets []query.Target) []Result {
	var out []Result
	for _, a := range as {
		for _, t := range targets {
			if a.Targets != nil && !contains(a.Targets, t) {
				continue
			}
			d := Ask(e, a.Verb, a.Subject, t)
			out = append(out, Result{Assertion: a, Target: t, Got: d, Pass: d.Allow == a.Allow})
		}
	}
	return out
}

// Ask asks e one question: verb (read, write, connect, unix-socket) about
// subject as a user writes it, on t. Subjects must have been checked by
// Parse (a bad connect subject is denied as malformed).
func Ask(e *query.Evaluator, verb, subject string, t query.Target) query.Decision {
	switch verb {
	case "read":
		return e.Read(e.Path(subject), t)
	case "write":
		return e.Write(e.Path(subject), t)
	case "unix-socket":
		return e.UnixSocket(e.Path(subject), t)
	}
	host, port, err := query.SplitHostPort(subject)
	if err != nil {
		host = "%" // malformed: refused before any rule
	}
	return e.Connect(host, port, t)
}

func contains(ts []query.Target, t query.Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}
