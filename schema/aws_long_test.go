package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// TestAwsPairsLong checks rule C8 on an awsPairs list longer than
// chunkSize: a pair beyond the first chunk naming an unmasked variable,
// and one repeating a variable of the first chunk, are reported at their
// own index.
func TestAwsPairsLong(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 10 // the rule costs CUE the square of the list's length
	var envVars, pairs []any
	for i := range chunkSize + 5 {
		id, secret := fmt.Sprintf("ID_%d", i), fmt.Sprintf("SECRET_%d", i)
		envVars = append(envVars, map[string]any{"name": id, "mode": "mask"}, map[string]any{"name": secret, "mode": "mask"})
		pairs = append(pairs, map[string]any{"accessKeyIdVar": id, "secretAccessKeyVar": secret})
	}
	pairs[chunkSize+1].(map[string]any)["secretAccessKeyVar"] = "NOT_MASKED"
	pairs[chunkSize+3].(map[string]any)["accessKeyIdVar"] = "ID_2"
	doc := map[string]any{
		"network":     map[string]any{"allowedDomains": []any{}, "deniedDomains": []any{}, "tlsTerminate": map[string]any{}},
		"filesystem":  map[string]any{"denyRead": []any{}, "allowWrite": []any{}, "denyWrite": []any{}},
		"credentials": map[string]any{"envVars": envVars, "awsPairs": pairs},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Options{OS: OSPosix}.Load("aws.json", data)
	var got []string
	for _, d := range diags {
		got = append(got, d.Path.String())
	}
	want := []string{
		fmt.Sprintf("credentials.awsPairs[%d].secretAccessKeyVar", chunkSize+1),
		fmt.Sprintf("credentials.awsPairs[%d].accessKeyIdVar", chunkSize+3),
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics at %q, want %q\n%v", got, want, diags)
	}
}
