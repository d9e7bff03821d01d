#!/usr/bin/env bash
# Build the lookahead packages with nfpm:
#   lookahead-agent   the site agent daemon (unit, sysusers, config)
#   lookahead-broker  the broker daemon (unit, sysusers, config)
#   lookahead         the CLI
# into dist/ (RPMs; DEBs too with --deb).
#
#   scripts/build-rpms.sh [--clean-clone] [--deb] [--out DIR]
#
# --clean-clone builds from a fresh `git clone` of HEAD (what a release
# build does: no untracked or uncommitted files leak in); without it the
# working tree is built. Version and release come from git
# (scripts/version.sh); LOOKAHEAD_VERSION / LOOKAHEAD_RELEASE override them.
# GOARCH picks the architecture (default amd64). nfpm v2.45.0 is installed
# with `go install` when it is not on PATH or in $(go env GOPATH)/bin.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/dist
clean_clone=0
formats=(rpm)
while [ $# -gt 0 ]; do
	case $1 in
	--clean-clone) clean_clone=1 ;;
	--deb) formats+=(deb) ;;
	--out) out=$2; shift ;;
	--out=*) out=${1#--out=} ;;
	-h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "build-rpms: unknown argument $1 (try --help)" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

NFPM_VERSION=v2.45.0
find_nfpm() {
	if command -v nfpm >/dev/null 2>&1; then command -v nfpm; return; fi
	local gobin
	gobin=$(go env GOBIN)
	[ -n "$gobin" ] || gobin=$(go env GOPATH)/bin
	if [ ! -x "$gobin/nfpm" ]; then
		echo "build-rpms: installing nfpm $NFPM_VERSION with go install" >&2
		go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION" >&2
	fi
	echo "$gobin/nfpm"
}
nfpm=$(find_nfpm)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$repo
if [ "$clean_clone" = 1 ]; then
	git clone --quiet --no-local "$repo" "$work/src"
	src=$work/src
fi

read -r version release < <("$repo/scripts/version.sh" "$src")
goarch=${GOARCH:-amd64}
full="$version-$release"
echo "build-rpms: lookahead $full ($goarch) from $src"

bindir=$work/bin
mkdir -p "$bindir"
(
	cd "$src"
	CGO_ENABLED=0 GOOS=linux GOARCH=$goarch go build -trimpath \
		-ldflags "-s -w -X lookahead/internal/version.Stamp=$full" \
		-o "$bindir/" ./cmd/lookahead-agent ./cmd/lookahead-broker ./cmd/lookahead
)

# Shell completions (bash, zsh, fish) of each binary, as the binary itself
# writes them (`lookahead completion bash`): with a build for this host
# when the packages are for another architecture.
compdir=$work/completions
mkdir -p "$compdir"
hostbin=$bindir
if [ "$goarch" != "$(go env GOHOSTARCH)" ]; then
	hostbin=$work/hostbin
	(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$hostbin/" ./cmd/lookahead-agent ./cmd/lookahead-broker ./cmd/lookahead)
fi
for b in lookahead lookahead-agent lookahead-broker; do
	"$hostbin/$b" completion bash >"$compdir/$b.bash"
	"$hostbin/$b" completion zsh >"$compdir/_$b"
	"$hostbin/$b" completion fish >"$compdir/$b.fish"
done

for pkg in agent broker cli; do
	for format in "${formats[@]}"; do
		(
			cd "$src"
			VERSION=$version RELEASE=$release ARCH=$goarch BINDIR=$bindir COMPDIR=$compdir \
				"$nfpm" package --config "packaging/nfpm/$pkg.yaml" \
				--packager "$format" --target "$out/" >/dev/null
		)
	done
done
ls -1 "$out" | grep -F -- "$version" | grep -F -- "${release}" | sed "s#^#build-rpms: $out/#"
