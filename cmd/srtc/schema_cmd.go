package main

import (
	"fmt"

	"srt.dev/schema"
)

type schemaCmd struct {
	osFlag
	Format string `enum:"cue,jsonschema" default:"cue" help:"cue: the grammar itself; jsonschema: for editors (\"$schema\" in a settings file)."`
}

func (c *schemaCmd) Help() string {
	return `The JSON Schema is generated from the CUE grammar. It cannot express the
rules of #Checks (cross-field rules, bracketed hosts, regular expressions,
URLs), so an editor accepts a little more than 'srtc validate' does.`
}

func (c *schemaCmd) Run(s streams) error {
	var out []byte
	var err error
	if c.Format == "jsonschema" {
		out, err = schema.JSONSchema(c.rules())
	} else {
		out, err = schema.CUE()
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(s.stdout, string(out))
	return err
}

type defaultsCmd struct{}

func (c *defaultsCmd) Run(s streams) error {
	schema.Defaults() // panics if the defaults ever stop passing the grammar
	_, err := fmt.Fprint(s.stdout, schema.DefaultSettingsJSON)
	return err
}
