#!/usr/bin/env bash
# The whole test suite: what the README calls "the test command" and what CI
# runs. Installs what it needs (Go modules; Debian's rpm and nfpm for the
# packaging tests) by itself. LOOKAHEAD_SKIP_PACKAGING=1 skips the packaging
# step (for quick local runs only; CI runs everything).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== static checks"
./scripts/static-checks.sh

echo "== go test"
go test -count=1 -timeout 15m ./...

if [ "${LOOKAHEAD_SKIP_PACKAGING:-0}" = 1 ]; then
	echo "== packaging: skipped (LOOKAHEAD_SKIP_PACKAGING=1)"
else
	echo "== packaging"
	./scripts/test-packaging.sh
fi
