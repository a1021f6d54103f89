#!/usr/bin/env bash
# Runs every check and test of the project: formatting, vet, cross-builds,
# the test suite, and a bounded run of each fuzz target.
set -euo pipefail
cd "$(dirname "$0")"
# Each phase says when it starts, in seconds since test.sh did.
phase() { echo "test.sh: $1 (at ${SECONDS} s)" >&2; }
phase "static checks: gofmt, vet, go.mod, staticcheck"

unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt -w needed for: $unformatted" >&2
	exit 1
fi
go vet ./...
# go.mod and go.sum say exactly what the code imports.
if ! go mod tidy -diff >/dev/null 2>&1; then
	echo "go.mod or go.sum is not tidy: run go mod tidy" >&2
	go mod tidy -diff >&2 || true
	exit 1
fi
# staticcheck, when installed (.ci/run installs it; go install
# honnef.co/go/tools/cmd/staticcheck@v0.8.2 does here).
staticcheck=$(command -v staticcheck || true)
[ -z "$staticcheck" ] && [ -x "$(go env GOPATH)/bin/staticcheck" ] && staticcheck="$(go env GOPATH)/bin/staticcheck"
if [ -n "$staticcheck" ]; then
	"$staticcheck" ./...
elif [ "${SRT_REQUIRE_SANDBOX:-}" = 1 ]; then
	echo "staticcheck is not installed: go install honnef.co/go/tools/cmd/staticcheck@v0.8.2" >&2
	exit 1
fi

# The import rules (the pure packages, the layers, what srt and srt-init
# link) are the test of internal/layers, run with the others.

phase "cross-builds for macOS and Windows"
# Nothing may rot on the platforms we cannot run here.
for target in darwin/amd64 darwin/arm64 windows/amd64; do
	GOOS=${target%/*} GOARCH=${target#*/} go build -o /dev/null ./cmd/srtc ./cmd/srt ./cmd/srt-main ./cmd/srt-init
done
# The darwin-only and windows-only files are vetted too: no Mac or
# Windows machine runs them here.
GOOS=darwin GOARCH=arm64 go vet ./...
GOOS=windows GOARCH=amd64 go vet ./...

phase "tests"
# The live tests of cmd/srt-main take minutes (the recipes build from empty caches).
# They choose whether srt runs warm (the caller's SRT_WARM does not).
# go vet ./... above ran every analyzer go test would, on the same files,
# so go test does not vet again.
unset SRT_WARM SRT_WARM_IDLE
go test -count=1 -vet=off -timeout 30m ./...
phase "srt's live tests again, each srt served by a warm server (SRT_WARM=on)"
SRT_WARM=on go test -count=1 -vet=off -timeout 30m ./cmd/srt-main

phase "fuzz targets"
# Each fuzz target runs a fixed number of inputs (about 10-20 s each here):
# a count, not a duration, because a duration can end with the fuzzing
# coordinator reporting "context deadline exceeded" while a worker is busy.
# FUZZTIME (e.g. 60s or 500000x) overrides it for every target.
fuzz() { go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-$3}"; }
fuzz ./schema FuzzLoad 30000x
fuzz ./internal/ecmaregex FuzzCheck 1500000x
fuzz ./compiler/policy FuzzCanonicalHost 300000x
fuzz ./runtime/proxy FuzzSOCKS 200000x
fuzz ./runtime/proxy FuzzHTTP 200000x
fuzz ./runtime/proxy FuzzSwap 200000x
fuzz ./runtime/proxy FuzzInjectRequest 100000x
fuzz ./runtime/proxy FuzzMatcher 100000x
fuzz ./runtime/proxy FuzzPeek 20000x
fuzz ./runtime/proxy FuzzFilterHead 150000x
fuzz ./runtime/proxy FuzzParseAuthorization 150000x
fuzz ./runtime/proxy/decider FuzzVerdict 300000x
fuzz ./runtime/secrets FuzzMask 30000x
fuzz ./schema FuzzPlain 3000x
fuzz ./runtime/quarantine FuzzCheck 1500x
fuzz ./runtime/quarantine FuzzReadSnapshot 20000x
fuzz ./runtime/gitconfig FuzzParseAgreesWithGit 1000x
fuzz ./emit/bwrap FuzzParse 100000x
phase "done"
