#!/usr/bin/env bash
# Print the package version and release of the checkout in $1 (default: the
# repository this script is in), derived from git:
#   on a tag vX.Y.Z            -> X.Y.Z 1
#   N commits after vX.Y.Z     -> X.Y.Z 1.N.g<sha>   (sorts after the tag)
#   no tag at all              -> 0.0.0 0.N.g<sha>   (N = commits in history)
#   uncommitted changes        -> ... .dirty appended to the release
# N grows with history, so a later commit is a newer package.
# LOOKAHEAD_VERSION / LOOKAHEAD_RELEASE override either part.
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$dir"
if [ -n "${LOOKAHEAD_VERSION:-}" ] && [ -n "${LOOKAHEAD_RELEASE:-}" ]; then
	echo "$LOOKAHEAD_VERSION $LOOKAHEAD_RELEASE"
	exit 0
fi
sha=$(git rev-parse --short=10 HEAD)
if desc=$(git describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
	# vX.Y.Z-N-gSHA
	tag=${desc%-*-g*}
	n=${desc#"$tag"-}
	n=${n%%-*}
	version=${tag#v}
	if [ "$n" = 0 ]; then release=1; else release="1.$n.g$sha"; fi
else
	version=0.0.0
	release="0.$(git rev-list --count HEAD).g$sha"
fi
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	release="$release.dirty"
fi
# rpm forbids "-" in version and release.
version=${LOOKAHEAD_VERSION:-${version//-/_}}
release=${LOOKAHEAD_RELEASE:-${release//-/_}}
echo "$version $release"
