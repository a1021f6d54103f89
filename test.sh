#!/usr/bin/env bash
# Runs every check and test of the project: formatting, vet, cross-builds,
# the test suite, and a bounded run of each fuzz target.
# FUZZTIME (default 20s) bounds each fuzz target.
set -euo pipefail
cd "$(dirname "$0")"

unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt -w needed for: $unformatted" >&2
	exit 1
fi
go vet ./...

# Nothing may rot on the platforms we cannot run here.
for target in darwin/amd64 darwin/arm64 windows/amd64; do
	GOOS=${target%/*} GOARCH=${target#*/} go build -o /dev/null ./cmd/srtc ./cmd/srt
done

go test -count=1 ./...

fuzz() { go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-20s}"; }
fuzz ./schema FuzzLoad
fuzz ./internal/ecmaregex FuzzCheck
fuzz ./compiler/policy FuzzCanonicalHost
fuzz ./runtime/proxy FuzzSOCKS
fuzz ./runtime/proxy FuzzHTTP
