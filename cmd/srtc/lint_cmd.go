package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"srt.dev/review/lint"
	"srt.dev/schema"
)

type lintCmd struct {
	osFlag
	Format string   `enum:"text,json,sarif,github" default:"text" help:"Output format: text (file:line:col: severity CODE: message), json, sarif (SARIF 2.1.0) or github (workflow annotations) (${enum})."`
	Scope  string   `enum:"auto,project,user" default:"auto" help:"Whether a file is a project's own settings (weakening switches are errors there) or the user's: auto says user for ~/.srt-settings.json, project otherwise (${enum})."`
	Files  []string `arg:"" optional:"" name:"file" help:"Settings files, or REV:path from git. Default: ~/.srt-settings.json."`
}

func (c *lintCmd) Help() string {
	var b strings.Builder
	b.WriteString("Exit status: 0 when no finding is an error, 1 when one is (or a file is\ninvalid), 2 for a usage or I/O error. The rules:\n\n")
	for _, r := range lint.Rules {
		fmt.Fprintf(&b, "  %s %-8s %s\n", r.Code, r.Severity, r.Name)
	}
	return b.String()
}

// lintResult is one file's findings.
type lintResult struct {
	File     string         `json:"file"`
	Findings []lint.Finding `json:"findings"`
}

func (c *lintCmd) Run(s streams) error {
	files := c.Files
	if len(files) == 0 {
		files = []string{""}
	}
	var results []lintResult
	status := exitOK
	for _, f := range files {
		src, name, err := loadSource(s, f, c.rules())
		if err != nil {
			if code, ok := err.(exitError); ok && int(code) > status {
				status = int(code)
				continue
			}
			return err
		}
		lo := lint.Options{ProjectLocal: c.projectLocal(f, name)}
		lo.Cwd, _ = os.Getwd()
		lo.Home, _ = os.UserHomeDir()
		lo.Exists = func(p string) bool { _, err := os.Lstat(p); return err == nil }
		fs := lint.Lint(src, lo)
		if fs == nil {
			fs = []lint.Finding{}
		}
		for _, x := range fs {
			if x.Severity == lint.Error && status == exitOK {
				status = exitFailure
			}
		}
		results = append(results, lintResult{name, fs})
	}
	switch c.Format {
	case "json":
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(results); err != nil {
			return err
		}
	case "sarif":
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sarifLog(results)); err != nil {
			return err
		}
	case "github":
		for _, r := range results {
			for _, f := range r.Findings {
				file, line, col := splitPos(f.Origin.Pos, r.File)
				level := map[lint.Severity]string{lint.Error: "error", lint.Warning: "warning", lint.Note: "notice"}[f.Severity]
				fmt.Fprintf(s.stdout, "::%s file=%s,line=%d,col=%d,title=%s %s::%s: %s\n", level, ghEscapeProp(file), line, col, f.Code, lint.RuleOf(f.Code).Name, ghEscape(f.Origin.Key), ghEscape(f.Message))
			}
		}
	default:
		for _, r := range results {
			for _, f := range r.Findings {
				fmt.Fprintln(s.stdout, f)
			}
		}
	}
	if status != exitOK {
		return exitError(status)
	}
	return nil
}

// projectLocal decides the scope of a file.
func (c *lintCmd) projectLocal(arg, name string) bool {
	switch c.Scope {
	case "project":
		return true
	case "user":
		return false
	}
	if arg == "" || name == schema.DefaultSettingsName {
		return false
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return true
	}
	abs, err := filepath.Abs(arg)
	return err != nil || abs != filepath.Join(home, ".srt-settings.json")
}

// splitPos splits "file:line:col" from the right; without a position the
// finding points at the file's start.
func splitPos(pos, file string) (string, int, int) {
	parts := strings.Split(pos, ":")
	if len(parts) >= 3 {
		line, err1 := strconv.Atoi(parts[len(parts)-2])
		col, err2 := strconv.Atoi(parts[len(parts)-1])
		if err1 == nil && err2 == nil {
			return strings.Join(parts[:len(parts)-2], ":"), line, col
		}
	}
	return file, 1, 1
}

// ghEscape escapes a workflow command's message.
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghEscapeProp escapes a workflow command's property value.
func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
