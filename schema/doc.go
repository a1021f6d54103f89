// Package schema owns the grammar of srt settings files
// (.srt-settings.json), compatible with the reference sandbox runtime
// (@anthropic-ai/sandbox-runtime v0.0.83).
//
// # How the grammar is built
//
// settings.cue, embedded with go:embed, is the single source of truth:
//
//   - #Settings is the per-value grammar: keys, types, required keys,
//     enums, ranges, and the string grammars (host patterns, allow and deny
//     entries with :port and bracketed IPv6, CIDR ranges, Mach names,
//     environment variable names, UUIDs, absolute binary paths per OS, path
//     entries and the literal marker). The IPv4 and IPv6 expressions are
//     those of Node's net.isIPv4 and net.isIPv6, so they accept exactly
//     what the reference accepts. Every struct is closed.
//   - #Checks holds the cross-field rules and the rules that need a parser,
//     written as comprehensions that yield violations as data. Written as
//     CUE errors, the first failing comprehension would hide the others; as
//     data, every rule reports every violation.
//   - #Facts is what Go computes for #Checks because CUE has no parser for
//     it: the WHATWG canonical host inside brackets (internal/whatwg), the
//     syntax and capture count of an ECMAScript regular expression
//     (internal/ecmaregex; RE2 would wrongly refuse lookbehind and named
//     groups), and whether a WHATWG parser accepts a URL. Go supplies
//     facts, never rules.
//
// Go also owns what is not a rule about values: the strict JSON parser
// (positions, duplicate keys, BOM, UTF-8, nesting depth, the 4 MiB size
// limit), deciding integers by value as JavaScript does (3.0 and 1e1 are
// integers), and the unknown-key and missing-key pass. CUE reports "field
// not allowed" only when nothing else is wrong, so this pass walks the
// document against the grammar itself and suggests the nearest key.
//
// # Loading
//
// Load parses a file strictly (no BOM, no duplicate keys, valid UTF-8, one
// object), validates it, and returns typed Settings or every problem at
// once as Diagnostics, each with file:line:col of the offending value, its
// JSON path (network.allowedDomains[2], ignoreViolations["git push"]) and a
// one-line message that says what to do. Unlike the reference, an unknown
// key is an error, with a did-you-mean suggestion: a typo must not silently
// drop a rule.
//
// The JSON Schema that editors use is exported from the same grammar
// (JSONSchema); it cannot express #Checks.
package schema
