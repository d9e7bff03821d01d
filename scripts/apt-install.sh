# Sourced by the scripts that install a Debian package the tests need
# (ensure-chromium.sh, ensure-slurm.sh): one way to run apt-get.
#
# apt_install WHO PACKAGE... installs the packages with apt-get (apt-get
# update first) as root, or with passwordless sudo. It returns 1 with the
# reason on stderr, prefixed with WHO, where it cannot (no apt-get, not
# root and no sudo, apt-get failed).
apt_install() {
	local who=$1
	shift
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "$who: $* missing and there is no apt-get to install it" >&2
		return 1
	fi
	local as_root=()
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			as_root=(sudo -n)
		else
			echo "$who: $* missing; installing needs root or passwordless sudo" >&2
			return 1
		fi
	fi
	echo "$who: installing $* with apt-get" >&2
	if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; then
		echo "$who: apt-get update failed" >&2
		return 1
	fi
	if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; then
		echo "$who: apt-get could not install $*" >&2
		return 1
	fi
}
