// Package schema owns the grammar of srt settings files
// (.srt-settings.json), compatible with the reference sandbox runtime
// (@anthropic-ai/sandbox-runtime v0.0.83).
//
// The grammar is settings.cue, embedded in this package and the single
// source of truth: #Settings is the per-value grammar, #Checks the
// cross-field rules. Go adds only parse results CUE cannot compute (WHATWG
// hosts and URLs, ECMAScript regular expressions), never a rule.
//
// Load parses a file strictly (no BOM, no duplicate keys, valid UTF-8, one
// object), validates it, and returns typed Settings or every problem at
// once as Diagnostics, each with file:line:col of the offending value, its
// JSON path and a message that says what to do. Unlike the reference, an
// unknown key is an error, with a did-you-mean suggestion: a typo must not
// silently drop a rule.
package schema
