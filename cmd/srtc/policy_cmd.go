package main

import (
	"encoding/json"
	"fmt"
	"io"

	"srt.dev/schema"
)

type policyCmd struct {
	osFlag
	Name string `help:"Name the file by in diagnostics and in the policy (for standard input)."`
	File string `arg:"" name:"file" help:"Settings file; - reads standard input."`
}

func (c *policyCmd) Help() string {
	return `Prints the compiled policy as JSON: what srt enforces, every rule with the
setting that produced it. srt runs this to validate and compile a settings
file (it does not link the grammar itself, to start faster).`
}

func (c *policyCmd) Run(s streams) error {
	name := c.File
	var data []byte
	var err error
	if c.File == "-" {
		name = "<stdin>"
		data, err = io.ReadAll(io.LimitReader(s.stdin, schema.MaxFileSize+1))
	} else {
		data, err = readFile(c.File)
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "srtc: %v\n", err)
		return exitError(exitUsage)
	}
	if c.Name != "" {
		name = c.Name
	}
	p, err := compileOrReport(s, name, data, c.rules())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(s.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(p)
}
