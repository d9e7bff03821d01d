#!/usr/bin/env bash
# Static checks beyond go vet: gofmt, staticcheck and deadcode (from the
# three binaries), at pinned versions installed by this script through the
# Go module proxy. deadcode's reports must match scripts/deadcode-allow.txt
# exactly (each allowed case is explained there).
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2 # staticcheck 2026.2.2, for Go 1.26
DEADCODE=golang.org/x/tools/cmd/deadcode@v0.52.0

tools="${LOOKAHEAD_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/lookahead/tools}"
install() { # module@version → the binary, installed once per version
	local dir="$tools/${1##*@}" bin="${1%@*}"
	bin="$dir/${bin##*/}"
	[ -x "$bin" ] || GOBIN="$dir" go install "$1" >&2
	echo "$bin"
}

echo "-- gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then
	echo "not gofmt-clean:"; echo "$bad"; exit 1
fi

echo "-- staticcheck"
"$(install "$STATICCHECK")" ./...

echo "-- deadcode"
got=$("$(install "$DEADCODE")" ./cmd/... | sed -E 's/:[0-9]+:[0-9]+: unreachable func: / /' | sort)
want=$(grep -vE '^\s*(#|$)' scripts/deadcode-allow.txt | sort)
if [ "$got" != "$want" ]; then
	echo "deadcode reports differ from scripts/deadcode-allow.txt (< reported, > allowed):"
	diff <(echo "$got") <(echo "$want") || true
	echo "wire or delete new unreachable code; drop allowlist lines no longer reported"
	exit 1
fi
