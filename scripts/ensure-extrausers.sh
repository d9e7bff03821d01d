#!/usr/bin/env bash
# Makes sure this host resolves users through an NSS source other than
# /etc/passwd, for the tests of users kept in a directory (issue 34: the
# agent resolves users through the system's NSS, as pbs_mom and slurmd do):
# installs Debian's libnss-extrausers when missing (apt-get update once,
# then apt-get install -y) as root or with passwordless sudo, creates
# /var/lib/extrausers/{passwd,group,shadow} when missing, and adds
# `extrausers` to the passwd and group lines of /etc/nsswitch.conf when it
# is not there (after the sources already listed: nothing of the host
# changes but that a name no other source knows may now come from there).
# Idempotent. Prints "extrausers" on success; exits 1 with the reason on
# stderr where it cannot — the tests then skip and say why.
set -euo pipefail

lib_installed() {
	local f
	for f in /lib/libnss_extrausers.so.2 /usr/lib/libnss_extrausers.so.2 /lib/*/libnss_extrausers.so.2 /usr/lib/*/libnss_extrausers.so.2; do
		[ -e "$f" ] && return 0
	done
	return 1
}

if ! lib_installed; then
	. "$(dirname "$0")/apt-install.sh"
	apt_install ensure-extrausers libnss-extrausers || exit 1
	lib_installed || { echo "ensure-extrausers: libnss-extrausers installed but libnss_extrausers.so.2 not found" >&2; exit 1; }
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		echo "ensure-extrausers: configuring NSS needs root or passwordless sudo" >&2
		exit 1
	fi
fi

"${as_root[@]}" mkdir -p /var/lib/extrausers
for f in passwd group shadow; do
	[ -e "/var/lib/extrausers/$f" ] || "${as_root[@]}" touch "/var/lib/extrausers/$f"
done
"${as_root[@]}" chmod 644 /var/lib/extrausers/passwd /var/lib/extrausers/group
"${as_root[@]}" chmod 640 /var/lib/extrausers/shadow

for db in passwd group; do
	if ! grep -Eq "^${db}:.*\bextrausers\b" /etc/nsswitch.conf; then
		if grep -Eq "^${db}:" /etc/nsswitch.conf; then
			"${as_root[@]}" sed -i -E "s/^(${db}:.*)$/\1 extrausers/" /etc/nsswitch.conf
		else
			echo "${db}: files extrausers" | "${as_root[@]}" tee -a /etc/nsswitch.conf >/dev/null
		fi
	fi
done
grep -Eq '^passwd:.*\bextrausers\b' /etc/nsswitch.conf || { echo "ensure-extrausers: /etc/nsswitch.conf does not list extrausers for passwd" >&2; exit 1; }
echo extrausers
