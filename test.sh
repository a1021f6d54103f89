#!/usr/bin/env bash
# Runs every check and test of the project: formatting, vet, cross-builds,
# the test suite, and a bounded run of each fuzz target.
set -euo pipefail
cd "$(dirname "$0")"
# Each phase says when it starts, in seconds since test.sh did.
phase() { echo "test.sh: $1 (at ${SECONDS} s)" >&2; }
phase "static checks: gofmt, vet, go.mod, staticcheck, layers"

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

# The pure packages (schema/, compiler/, emit/ and what they import of this
# module) neither import runtime/ nor touch the host: no files, processes,
# system calls or network. The exceptions, one "package import  # why" per
# line, are all here.
pure_exceptions='
srt.dev/review/query net # ParseIP and SplitHostPort: parsing only
'
host_imports=' os os/exec os/user os/signal syscall io/ioutil net net/http plugin golang.org/x/sys/unix '
violations=""
for pkg in $(go list -deps ./schema/... ./compiler/... ./emit/... | grep '^srt.dev/'); do
	case "$pkg" in srt.dev/runtime*|srt.dev/cmd*)
		violations="$violations\n$pkg is imported by a pure package"; continue ;;
	esac
	for imp in $(go list -f '{{join .Imports " "}}' "$pkg"); do
		case "$host_imports" in *" $imp "*) ;; *) continue ;; esac
		grep -qE "^$pkg $imp( |\$)" <<<"$pure_exceptions" && continue
		violations="$violations\n$pkg imports $imp"
	done
done
if [ -n "$violations" ]; then
	printf 'pure packages reach the host (move the code to runtime/, or list the exception in test.sh):%b\n' "$violations" >&2
	exit 1
fi

# The house's layers, lowest first: a package imports only from its own
# layer or below (tests aside). internal/ holds leaves (helpers, test
# fixtures, and tools under internal/perf and internal/settingsgen/*,
# which are programs); the IR and its semantics (compiler/policy) sit
# under the grammar and the compiler; emitters under the review tools;
# the runtime beside them; the commands on top.
layer() {
	case "$1" in
	srt.dev/internal/perf|srt.dev/internal/settingsgen/*) echo 7 ;;
	srt.dev/internal/*|srt.dev/schema/builtin) echo 0 ;;
	srt.dev/compiler/policy|srt.dev/compiler/policy/*) echo 1 ;;
	srt.dev/schema|srt.dev/schema/*|srt.dev/compiler|srt.dev/compiler/*) echo 2 ;;
	srt.dev/emit/*) echo 3 ;;
	srt.dev/review/*) echo 4 ;;
	srt.dev/runtime|srt.dev/runtime/*) echo 5 ;;
	srt.dev/cmd/*|srt.dev/examples/*|srt.dev/golden) echo 6 ;;
	*) echo "test.sh: package $1 has no layer: give it one" >&2; echo 9 ;;
	esac
}
upward=""
while read -r pkg imps; do
	lp=$(layer "$pkg")
	for imp in $imps; do
		case "$imp" in srt.dev/*) ;; *) continue ;; esac
		li=$(layer "$imp")
		[ "$li" -gt "$lp" ] && upward="$upward\n$pkg (layer $lp) imports $imp (layer $li)"
		# The runtime decides by the policy, never by the review tools.
		case "$pkg:$imp" in srt.dev/runtime*:srt.dev/review/*) upward="$upward\n$pkg imports $imp" ;; esac
	done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
if [ -n "$upward" ]; then
	printf 'imports against the layers (see test.sh):%b\n' "$upward" >&2
	exit 1
fi
# srt starts twice a run: it links neither the grammar (CUE) nor the
# compiler, which srtc holds.
if go list -deps ./cmd/srt | grep -qE '^(cuelang\.org/|srt\.dev/compiler$|srt\.dev/schema$)'; then
	echo "cmd/srt links CUE or the compiler: $(go list -deps ./cmd/srt | grep -E '^(cuelang\.org/|srt\.dev/compiler$|srt\.dev/schema$)' | head -3 | tr '\n' ' ')" >&2
	exit 1
fi
# srt-init starts inside every sandbox: it links no network stack, TLS or
# JSON (runtime/initstep).
lean='^(net|net/http|crypto/tls|encoding/json|srt\.dev/runtime/sandbox|srt\.dev/compiler/.*)$'
if go list -deps ./cmd/srt-init | grep -qE "$lean"; then
	echo "cmd/srt-init links $(go list -deps ./cmd/srt-init | grep -E "$lean" | tr '\n' ' ')" >&2
	exit 1
fi

phase "cross-builds for macOS and Windows"
# Nothing may rot on the platforms we cannot run here.
for target in darwin/amd64 darwin/arm64 windows/amd64; do
	GOOS=${target%/*} GOARCH=${target#*/} go build -o /dev/null ./cmd/srtc ./cmd/srt ./cmd/srt-init
done
# The darwin-only files (the macOS runtime) are vetted too: no Mac runs them here.
GOOS=darwin GOARCH=arm64 go vet ./...

phase "tests"
# The live tests of cmd/srt take minutes (the recipes build from empty caches).
go test -count=1 -timeout 30m ./...

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
phase "done"
