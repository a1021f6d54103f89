package main

import (
	"srt.dev/internal/buildversion"

	"path/filepath"

	"srt.dev/review/lint"
)

// The SARIF 2.1.0 log srtc lint writes (OASIS SARIF v2.1.0; only the
// properties srtc fills are declared).
type sarifLogDoc struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name    string      `json:"name"`
	Version string      `json:"version"`
	Rules   []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	DefaultConfiguration struct {
		Level string `json:"level"`
	} `json:"defaultConfiguration"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine   int `json:"startLine"`
			StartColumn int `json:"startColumn"`
		} `json:"region"`
	} `json:"physicalLocation"`
	LogicalLocations []struct {
		FullyQualifiedName string `json:"fullyQualifiedName"`
	} `json:"logicalLocations"`
}

// sarifLog converts lint results to one SARIF run. Levels map one to one
// (error, warning, note); URIs are the files as named, with forward
// slashes.
func sarifLog(results []lintResult) sarifLogDoc {
	d := sarifDriver{Name: "srtc", Version: buildversion.Version(version), Rules: []sarifRule{}}
	index := map[string]int{}
	for i, r := range lint.Rules {
		sr := sarifRule{ID: r.Code, Name: r.Name, ShortDescription: sarifMessage{r.Help}}
		sr.DefaultConfiguration.Level = string(r.Severity)
		d.Rules = append(d.Rules, sr)
		index[r.Code] = i
	}
	run := sarifRun{Tool: sarifTool{d}, Results: []sarifResult{}}
	for _, r := range results {
		for _, f := range r.Findings {
			file, line, col := splitPos(f.Origin.Pos, r.File)
			var loc sarifLocation
			loc.PhysicalLocation.ArtifactLocation.URI = filepath.ToSlash(file)
			loc.PhysicalLocation.Region.StartLine = line
			loc.PhysicalLocation.Region.StartColumn = col
			loc.LogicalLocations = append(loc.LogicalLocations, struct {
				FullyQualifiedName string `json:"fullyQualifiedName"`
			}{f.Origin.Key})
			run.Results = append(run.Results, sarifResult{
				RuleID: f.Code, RuleIndex: index[f.Code], Level: string(f.Severity),
				Message: sarifMessage{f.Message}, Locations: []sarifLocation{loc},
			})
		}
	}
	return sarifLogDoc{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
}
