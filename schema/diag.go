package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// A Diagnostic is one problem in a settings file.
type Diagnostic struct {
	// File is the name the file was loaded under.
	File string `json:"file"`
	// Line and Col locate the offending JSON value (1-based; Col counts
	// bytes). They are 0 when the problem concerns the file as a whole.
	Line int `json:"line"`
	Col  int `json:"col"`
	// Path is the JSON path of the value; nil for a syntax error.
	Path Path `json:"-"`
	// Message says what is wrong and what to do, in one line.
	Message string `json:"message"`

	off  int    // byte offset, for ordering
	rule string // the #Checks rule that found it; "" for the grammar
}

// MarshalJSON writes the diagnostic with its path as a string.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	type out struct {
		File    string `json:"file"`
		Line    int    `json:"line,omitempty"`
		Col     int    `json:"col,omitempty"`
		Path    string `json:"path,omitempty"`
		Message string `json:"message"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(out{d.File, d.Line, d.Col, d.PathString(), d.Message})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// PathString is Path rendered, or "" for a syntax error.
func (d Diagnostic) PathString() string {
	if d.Path == nil {
		return ""
	}
	return d.Path.String()
}

// String renders d compiler-style, so that editors can jump to it:
//
//	settings.json:3:5: network.allowedDomains[0]: must be ...
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
	}
	b.WriteString(": ")
	if d.Path != nil {
		b.WriteString(d.Path.String())
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics are all the problems found in one file, in file order. A
// non-nil Diagnostics is an error.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

func (ds Diagnostics) sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].off != ds[j].off {
			return ds[i].off < ds[j].off
		}
		return ds[i].PathString() < ds[j].PathString()
	})
}
