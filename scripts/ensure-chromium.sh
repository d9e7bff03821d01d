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
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: chromium is missing and there is no apt-get to install it" >&2
	exit 1
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		echo "ensure-chromium: chromium is missing; installing it needs root or passwordless sudo" >&2
		exit 1
	fi
fi
echo "ensure-chromium: installing chromium with apt-get" >&2
if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 ||
	! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
	echo "ensure-chromium: apt-get could not install chromium" >&2
	exit 1
fi
find_chromium || { echo "ensure-chromium: chromium installed but not on PATH" >&2; exit 1; }
