package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"srt.dev/schema"
)

type validateCmd struct {
	osFlag
	Format string   `enum:"text,json" default:"text" help:"Output format: text (file:line:col: path: message) or json."`
	Files  []string `arg:"" optional:"" name:"file" help:"Settings files to check; - reads standard input. Default: ~/.srt-settings.json." type:"string"`
}

func (c *validateCmd) Help() string {
	return `Exit status: 0 when every file is valid, 1 when any is invalid, 2 for a usage
or I/O error. A missing ~/.srt-settings.json is not an error: srt then runs
with the built-in defaults (see 'srtc defaults').`
}

// fileResult is one file's outcome, also the JSON output's element.
type fileResult struct {
	File        string              `json:"file"`
	Valid       bool                `json:"valid"`
	Defaults    bool                `json:"usesBuiltInDefaults,omitempty"`
	Error       string              `json:"error,omitempty"`
	Diagnostics []schema.Diagnostic `json:"diagnostics"`
}

func (c *validateCmd) Run(s streams) error {
	opts := schema.Options{OS: c.rules()}
	var results []fileResult
	if len(c.Files) == 0 {
		results = append(results, c.validateDefault(opts))
	}
	for _, name := range c.Files {
		results = append(results, validateFile(opts, name, s.stdin))
	}
	status := exitOK
	for _, r := range results {
		switch {
		case r.Error != "":
			status = exitUsage
		case !r.Valid && status == exitOK:
			status = exitFailure
		}
	}
	if c.Format == "json" {
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Valid bool         `json:"valid"`
			Files []fileResult `json:"files"`
		}{status == exitOK, results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			switch {
			case r.Error != "":
				fmt.Fprintf(s.stderr, "srtc: %s\n", r.Error)
			case r.Defaults:
				fmt.Fprintf(s.stderr, "%s does not exist: srt uses the built-in defaults (no network, no writes outside the usual scratch paths; see 'srtc defaults')\n", r.File)
			case r.Valid:
				fmt.Fprintf(s.stdout, "%s: valid\n", r.File)
			default:
				for _, d := range r.Diagnostics {
					fmt.Fprintln(s.stdout, d)
				}
			}
		}
	}
	if status != exitOK {
		return exitError(status)
	}
	return nil
}

// validateDefault checks ~/.srt-settings.json; its absence means defaults.
func (c *validateCmd) validateDefault(opts schema.Options) fileResult {
	home, err := os.UserHomeDir()
	if err != nil {
		return fileResult{File: "~/.srt-settings.json", Error: fmt.Sprintf("cannot find the home directory for the default settings file: %v; name a file", err)}
	}
	name := filepath.Join(home, ".srt-settings.json")
	if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
		// srt falls back to the built-in defaults; check them as srt would.
		if _, diags := opts.Load(schema.DefaultSettingsName, []byte(schema.DefaultSettingsJSON)); diags != nil {
			return fileResult{File: schema.DefaultSettingsName, Diagnostics: diags}
		}
		return fileResult{File: name, Valid: true, Defaults: true, Diagnostics: []schema.Diagnostic{}}
	}
	return validateFile(opts, name, nil)
}

func validateFile(opts schema.Options, name string, stdin io.Reader) fileResult {
	r := fileResult{File: name, Diagnostics: []schema.Diagnostic{}}
	var data []byte
	var err error
	if name == "-" {
		r.File = "<stdin>"
		data, err = io.ReadAll(io.LimitReader(stdin, schema.MaxFileSize+1))
	} else {
		data, err = readFile(name)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if len(data) > schema.MaxFileSize {
		size := int64(len(data))
		if st, err := os.Stat(name); err == nil && name != "-" {
			size = st.Size()
		}
		r.Diagnostics = schema.TooLarge(r.File, size)
		return r
	}
	_, diags := opts.Load(r.File, data)
	r.Valid = diags == nil
	if diags != nil {
		r.Diagnostics = diags
	}
	return r
}

// readFile reads a settings file, refusing directories and reading at most
// one byte more than a settings file may hold, so that Load can say the
// file is too large without srtc reading all of it.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", name)
		}
		return nil, fmt.Errorf("%s could not be read: %v", name, errors.Unwrap(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a settings file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, schema.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s could not be read: %v", name, err)
	}
	return data, nil
}
