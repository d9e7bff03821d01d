#!/usr/bin/env bash
# The whole test suite: what the README calls "the test command" and what CI
# runs. Installs what it needs (Go modules; Debian's chromium for the web
# view's browser test; Debian's Slurm and munge for the live Slurm tests;
# Debian's libnss-extrausers for the tests of a user only NSS knows;
# Debian's rpm and nfpm for the packaging tests) by
# itself. LOOKAHEAD_SKIP_PACKAGING=1 skips the packaging step (for quick
# local runs only; CI runs everything).
#
# Every step runs, whatever an earlier one did (a failing test must not
# hide a packaging problem); at the end come the time of every test
# package, every skipped test with its reason (what did not run), and one
# line per step. The exit status is 1 when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
# Read, then unset: the daemons warn of any LOOKAHEAD_* variable that sets
# no key of their configuration, and their tests read those warnings.
skip_packaging=${LOOKAHEAD_SKIP_PACKAGING:-0}
unset LOOKAHEAD_SKIP_PACKAGING

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
steps=()
failed=0

# step NAME COMMAND...: runs COMMAND (a function or a program, in this
# shell) and records its result and time; a failure is counted, never
# fatal.
step() {
	local name=$1 start=$SECONDS rc=0
	shift
	echo "== $name"
	"$@" || rc=$?
	local result=ok
	if [ "$rc" != 0 ]; then
		result="FAILED (exit $rc)"
		failed=$((failed + 1))
	fi
	steps+=("$(printf '%-22s %-16s %5ds' "$name" "$result" $((SECONDS - start)))")
}

# note NAME TEXT: a step that did not run, and why.
note() {
	echo "== $1: $2"
	steps+=("$(printf '%-22s %s' "$1" "$2")")
}

# ensure WHAT SCRIPT VAR: runs scripts/SCRIPT, which installs what a group
# of tests needs; where it did, exports VAR=1 so that those tests must run,
# not skip (the name is outside LOOKAHEAD_*, which the daemons' configuration
# reads); where it could not, they skip and say why. Neither is a failure.
ensure() {
	local what=$1 script=$2 var=$3 out
	if out=$("./scripts/$script"); then
		echo "$out"
		export "$var=1"
	else
		echo "$what unavailable: its tests skip (reason above)"
	fi
}

ensure_extrausers() {
	if ./scripts/ensure-extrausers.sh; then
		# configured: the tests of a user only NSS knows must run, not
		# skip (they still skip where not root)
		export LOOKAHEADTEST_REQUIRE_EXTRAUSERS=1
	else
		echo "extrausers unavailable: the tests of a user only NSS knows skip (reason above)"
	fi
}

# gotest runs every test with go test -json through scripts/testreport,
# which prints each package as it ends and keeps the summary for the end.
# A package gets 30 minutes: the replay's takes 75 s on a quiet 2-core
# machine and took 586 s beside two CPU hogs; a hung test still fails well
# within CI's 90 minutes.
gotest() {
	go build -o "$work/testreport" ./scripts/testreport || return
	go test -count=1 -timeout 30m -json ./... 2>&1 | "$work/testreport" -summary "$work/go-test-summary"
}

step "go vet" go vet ./...
step "static checks" ./scripts/static-checks.sh
step "chromium" ensure "chromium (the web view's browser test)" ensure-chromium.sh LOOKAHEADTEST_REQUIRE_CHROMIUM
# the live Slurm tests still skip where not root: slurmd launches jobs as their users
step "slurm" ensure "slurm (the live Slurm tests)" ensure-slurm.sh LOOKAHEADTEST_REQUIRE_SLURM
step "extrausers" ensure_extrausers
step "go test" gotest
if [ "$skip_packaging" = 1 ]; then
	note "packaging" "skipped (LOOKAHEAD_SKIP_PACKAGING=1)"
else
	step "packaging" ./scripts/test-packaging.sh
fi

echo
[ -f "$work/go-test-summary" ] && cat "$work/go-test-summary"
echo "-- steps"
printf '%s\n' "${steps[@]}"
if [ "$failed" != 0 ]; then
	echo "make test: $failed of ${#steps[@]} steps failed"
	exit 1
fi
echo "make test: every step passed"
