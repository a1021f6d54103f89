package schema

import (
	"bytes"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checksRules are the rules of #Checks. JSON Schema cannot express any of
// them (they relate several values, or need a parser JSON Schema does not
// have), so an editor using the exported schema accepts a file that breaks
// only these rules, and srtc validate rejects it.
var checksRules = map[string]string{
	"bracketedAllow":     "the host inside [brackets] is canonicalised by a URL parser before the host grammar applies",
	"bracketedDeny":      "as bracketedAllow",
	"inertDenyGlob":      "depends on filesystem.disabled and on the credential's mode",
	"injectCovered":      "relates injectHosts to network.allowedDomains",
	"maskNeverInjected":  "depends on mode",
	"maskExcluded":       "relates injectHosts to tlsTerminate.excludeDomains",
	"bodyInjectMode":     "depends on mode",
	"bodyInjectCovered":  "relates bodyInjectHosts to injectHosts or network.allowedDomains",
	"bodyInjectExcluded": "relates bodyInjectHosts to tlsTerminate.excludeDomains",
	"maskClaims":         "depends on decode",
	"maskDirectory":      "depends on mode",
	"extract":            "needs an ECMAScript regex parser that counts groups",
	"awsPairs":           "relates awsPairs to credentials.envVars",
	"maskNeedsTLS":       "relates credentials to network.tlsTerminate",
	"caPair":             "relates caCertPath to caKeyPath",
	"proxyPortRange":     "compares the two ports",
	"parentProxyURL":     "needs a WHATWG URL parser",
}

func compileJSONSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := JSONSchema(OSPosix)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(JSONSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(JSONSchemaID)
	if err != nil {
		t.Fatalf("the exported JSON Schema does not compile: %v", err)
	}
	return sch
}

// TestJSONSchemaConformance validates every conformance case with an
// independent JSON Schema validator and checks that it agrees with Load,
// except where Load's only objections come from #Checks.
func TestJSONSchemaConformance(t *testing.T) {
	sch := compileJSONSchema(t)
	agree, checksOnly := 0, 0
	for _, c := range loadCases(t) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Input))
		if err != nil {
			t.Fatal(err)
		}
		schemaOK := sch.Validate(doc) == nil
		_, diags := Options{OS: OSPosix}.Load(c.ID, c.Input)
		if schemaOK == (diags == nil) {
			agree++
			continue
		}
		if !schemaOK {
			t.Errorf("%s: the JSON Schema rejects what srtc accepts: %v", c.ID, sch.Validate(doc))
			continue
		}
		for _, d := range diags {
			if _, ok := checksRules[d.rule]; !ok {
				t.Errorf("%s: the JSON Schema accepts it, but srtc rejects it by a grammar rule: %s", c.ID, d)
			}
		}
		checksOnly++
	}
	t.Logf("JSON Schema agrees with srtc on %d cases; %d are rejected only by #Checks rules", agree, checksOnly)
}

// TestChecksRulesListed keeps checksRules equal to the rules in settings.cue.
func TestChecksRulesListed(t *testing.T) {
	g := grammarFor(OSPosix)
	it, err := g.checks.LookupPath(cue.ParsePath("out")).Fields()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for it.Next() {
		name := it.Selector().Unquoted()
		seen[name] = true
		if _, ok := checksRules[name]; !ok {
			t.Errorf("#Checks rule %q is not listed in checksRules", name)
		}
	}
	for name := range checksRules {
		if !seen[name] {
			t.Errorf("checksRules lists %q, which #Checks does not have", name)
		}
	}
}

func TestJSONSchemaEditorUse(t *testing.T) {
	sch := compileJSONSchema(t)
	// A file that names the schema with "$schema" must validate: editors
	// send the whole document, "$schema" included.
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$schema": "` + JSONSchemaID + `", ` + base[1:]))
	if err := sch.Validate(doc); err != nil {
		t.Errorf("a file with \"$schema\" fails the exported schema: %v", err)
	}
	if _, diags := Load("s.json", []byte(`{"$schema": "`+JSONSchemaID+`", `+base[1:])); diags != nil {
		t.Errorf("srtc rejects a file with \"$schema\": %v", diags)
	}
}
