#!/usr/bin/env bash
# The whole test suite: what the README calls "the test command" and what CI
# runs. Installs what it needs (Go modules; Debian's rpm for the packaging
# tests) by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== go test"
go test -count=1 -timeout 15m ./...
