#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the web view's
# browser test (broker/web, TestBrowserShowsTheGrid), as scripts/test.sh
# needs it: does nothing when chromium is already on PATH, else installs
# Debian's chromium with apt-get (as root, or with passwordless sudo).
# Prints the browser's path on success; exits 1 with the reason on stderr
# where it cannot be installed (no apt-get, no root) — the test then skips
# and says why.
set -euo pipefail

find_chromium() {
	local b
	for b in chromium chromium-browser; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

if find_chromium; then
	exit 0
fi
. "$(dirname "$0")/apt-install.sh"
apt_install ensure-chromium chromium || exit 1
find_chromium || { echo "ensure-chromium: chromium installed but not on PATH" >&2; exit 1; }
