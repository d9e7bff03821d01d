#!/usr/bin/env bash
# The whole test suite: what the README calls "the test command" and what CI
# runs. Installs what it needs (Go modules; Debian's chromium for the web
# view's browser test; Debian's Slurm and munge for the live Slurm tests;
# Debian's rpm and nfpm for the packaging tests) by
# itself. LOOKAHEAD_SKIP_PACKAGING=1 skips the packaging step (for quick
# local runs only; CI runs everything).
set -euo pipefail
cd "$(dirname "$0")/.."
# Read, then unset: the daemons warn of any LOOKAHEAD_* variable that sets
# no key of their configuration, and their tests read those warnings.
skip_packaging=${LOOKAHEAD_SKIP_PACKAGING:-0}
unset LOOKAHEAD_SKIP_PACKAGING

echo "== go vet"
go vet ./...

echo "== static checks"
./scripts/static-checks.sh

echo "== chromium (the web view's browser test)"
if chromium_path=$(./scripts/ensure-chromium.sh); then
	echo "$chromium_path"
	# installed: the browser test must run, not skip (the name is outside
	# LOOKAHEAD_*, which the daemons' configuration reads)
	export LOOKAHEADTEST_REQUIRE_CHROMIUM=1
else
	echo "chromium unavailable: the browser test skips (reason above)"
fi

echo "== slurm (the live Slurm tests: slurm, slurm/slurmtest)"
if slurm_version=$(./scripts/ensure-slurm.sh); then
	echo "$slurm_version"
	# installed: the live Slurm tests must run, not skip (they still skip
	# where not root: slurmd must launch jobs as their users)
	export LOOKAHEADTEST_REQUIRE_SLURM=1
else
	echo "slurm unavailable: the live Slurm tests skip (reason above)"
fi

echo "== go test"
go test -count=1 -timeout 15m ./...

if [ "$skip_packaging" = 1 ]; then
	echo "== packaging: skipped (LOOKAHEAD_SKIP_PACKAGING=1)"
else
	echo "== packaging"
	./scripts/test-packaging.sh
fi
