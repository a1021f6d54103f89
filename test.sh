#!/usr/bin/env bash
# Runs every check and test of the project: formatting, vet, cross-builds,
# the test suite, and a bounded run of each fuzz target.
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
# The darwin-only files (the macOS runtime) are vetted too: no Mac runs them here.
GOOS=darwin GOARCH=arm64 go vet ./...

go test -count=1 ./...

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
