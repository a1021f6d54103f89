package compiler

import (
	"encoding/json"
	"fmt"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// AllowList validates and parses a per-command allow list (the library's
// registerCommandNetworkLists): each entry must pass the allowedDomains
// grammar, checked by the same schema as a settings file, so that no second
// copy of the grammar exists. A refusal names the entry's index and what
// is wrong with it; origins are "commandNetworkLists.allowedDomains[i]".
func AllowList(entries []string) (policy.HostList, error) {
	if entries == nil {
		entries = []string{}
	}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": entries, "deniedDomains": []string{}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	s, diags := schema.Options{OS: schema.OSPosix}.Load("per-command allow list", data)
	if diags != nil {
		d := diags[0]
		if len(d.Path) == 3 {
			if i, ok := d.Path[2].(int); ok {
				return nil, fmt.Errorf("per-command allow list: entry %d (%q) %s", i, entries[i], d.Message)
			}
		}
		return nil, fmt.Errorf("per-command allow list: %s", d.Message)
	}
	c := &compiler{s: s}
	l, err := c.hosts("allowedDomains", s.Network.AllowedDomains)
	if err != nil {
		return nil, err
	}
	for i := range l {
		l[i].Origin = policy.Origin{Key: fmt.Sprintf("commandNetworkLists.allowedDomains[%d]", i)}
	}
	return l, nil
}
