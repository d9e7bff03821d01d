#!/usr/bin/env bash
# Packaging tests, run by scripts/test.sh (the test command CI runs).
#
# Builds the RPMs twice (this tree, and a copy whose default configs
# changed, as the next release), then with rpm:
#   - file lists, owners, modes and flags against packaging/testdata/*.files
#   - the configs flagged %config(noreplace) ("cn")
#   - the scriptlets (rpm -qp --scripts) do what the systemd macros do
#   - install into scratch --root trees (one creating users with
#     systemd-sysusers, one with the groupadd/useradd fallback), rpm -V
#     clean, edit a config, upgrade, check the edit survived and the new
#     default landed as .rpmnew, erase and check the edit is kept (.rpmsave)
#   - systemd-analyze verify on the installed units, when available
#
# Installs what it needs: Debian's rpm through apt-get (as root, or with
# passwordless sudo), nfpm through `go install` (scripts/build-rpms.sh).
# Installing into a scratch root needs root (chroot for the scriptlets).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

failures=0
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

as_root=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		echo "test-packaging: needs root (or passwordless sudo) to install rpm and to install packages into a scratch root; run as root" >&2
		exit 1
	fi
fi

. "$repo/scripts/apt-install.sh"
command -v rpm >/dev/null 2>&1 || apt_install test-packaging rpm || exit 1

tmp=$(mktemp -d)
trap '"${as_root[@]}" rm -rf "$tmp"' EXIT

# ---- build: this tree (version from git) and the "next release"
read -r ver rel < <(scripts/version.sh)
debs=()
command -v dpkg-deb >/dev/null 2>&1 && debs=(--deb)
scripts/build-rpms.sh --out "$tmp/v1" "${debs[@]}"
next_rel="$rel.1"
mkdir -p "$tmp/src2"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$tmp/src2"
for f in agent broker; do
	printf '\n# (a default added in the next release)\n' >>"$tmp/src2/packaging/config/$f.yaml"
done
LOOKAHEAD_VERSION=$ver LOOKAHEAD_RELEASE=$next_rel "$tmp/src2/scripts/build-rpms.sh" --out "$tmp/v2"

rpmq() { rpm -qp "$@" 2>/dev/null; }
pkgfile() { echo "$1/$2-$ver-$3.x86_64.rpm"; }

# ---- version scheme (scripts/version.sh) on a scratch repository
vrepo=$tmp/vrepo
git init -q "$vrepo"
gitv() { git -C "$vrepo" -c user.name=t -c user.email=t@t "$@"; }
gitv commit -q --allow-empty -m one
gitv commit -q --allow-empty -m two
sha=$(gitv rev-parse --short=10 HEAD)
check_version() {
	local got
	got=$(scripts/version.sh "$vrepo")
	[ "$got" = "$2" ] && ok "version $1: $got" || fail "version $1: '$got', want '$2'"
}
check_version "without a tag" "0.0.0 0.2.g$sha"
gitv tag v1.2.0
check_version "on tag v1.2.0" "1.2.0 1"
gitv commit -q --allow-empty -m three
sha=$(gitv rev-parse --short=10 HEAD)
check_version "a commit after v1.2.0" "1.2.0 1.1.g$sha"
touch "$vrepo/f" && gitv add f
check_version "with uncommitted changes" "1.2.0 1.1.g$sha.dirty"
# rpm's own ordering: a post-tag build is newer than the tag, older than the next
vercmp() { rpm --eval "%{lua: print(rpm.vercmp('$1', '$2'))}"; }
[ "$(vercmp "1.2.0-1.1.g$sha" 1.2.0-1)" = 1 ] && [ "$(vercmp "1.2.0-1.1.g$sha" 1.2.1-1)" = -1 ] &&
	[ "$(vercmp "1.2.0-1.2.gabc" "1.2.0-1.1.g$sha")" = 1 ] &&
	ok "rpm orders 1.2.0-1 < 1.2.0-1.1.g$sha < 1.2.0-1.2.g… < 1.2.1-1" || fail "rpm ordering of versions"

# ---- the default configs are valid YAML and document every NATS option
for f in packaging/config/agent.yaml packaging/config/broker.yaml; do
	if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
		python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$f" && ok "$f parses as YAML" || fail "$f is not valid YAML"
	fi
	for key in $(grep -o 'mapstructure:"[a-z_]*"' internal/natsconn/conn.go | cut -d'"' -f2); do
		grep -Eq "^  #? ?$key:" "$f" || fail "$f does not document nats.$key"
	done
done

# every key the daemons read is documented in their packaged config
keys_of() { grep -ho 'mapstructure:"[a-z_]*"' "$@" 2>/dev/null | cut -d'"' -f2 | sort -u; }
for pair in "agent.yaml:cmd/lookahead-agent/config.go cmd/lookahead-agent/slurm.go torque/client.go" \
	"broker.yaml:cmd/lookahead-broker/config.go broker/budget.go broker/admit.go"; do
	f=packaging/config/${pair%%:*}
	before=$failures
	# shellcheck disable=SC2086
	for key in $(keys_of ${pair#*:}); do
		grep -Eq "^ *#? ?-? ?$key:|[{ ,]$key:" "$f" || fail "$f does not document the key $key"
	done
	[ "$failures" = "$before" ] && ok "$f documents every key the daemon reads"
done

# ---- static checks on the built packages
for name in lookahead-agent lookahead-broker lookahead; do
	f=$(pkgfile "$tmp/v1" "$name" "$rel")
	if [ ! -f "$f" ]; then fail "$name: $f not built"; continue; fi
	got=$(rpmq --qf '%{NAME} %{VERSION}-%{RELEASE}' "$f")
	[ "$got" = "$name $ver-$rel" ] && ok "$name: version $ver-$rel from git" || fail "$name: version $got, want $ver-$rel"
	want=packaging/testdata/$name.files
	if diff -u "$want" <(rpmq --qf '[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} flags=%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$f" | sort -k5); then
		ok "$name: files, modes, owners and flags match $want"
	else
		fail "$name: file list differs from $want"
	fi
done

for name in agent broker; do
	f=$(pkgfile "$tmp/v1" "lookahead-$name" "$rel")
	flags=$(rpmq --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$f" | awk -v p="/etc/lookahead/$name.yaml" '$2 == p {print $1}')
	[ "$flags" = cn ] && ok "lookahead-$name: /etc/lookahead/$name.yaml is %config(noreplace) (cn)" || fail "lookahead-$name: config flags '$flags', want cn"
	scripts=$(rpmq --scripts "$f")
	before=$failures
	for want in 'preinstall scriptlet' 'systemd-sysusers --replace=/usr/lib/sysusers.d/$user.conf' 'useradd -r' \
		'postinstall scriptlet' 'systemctl --no-reload preset "$unit"' \
		'preuninstall scriptlet' 'systemctl --no-reload disable --now "$unit"' \
		'postuninstall scriptlet' 'systemctl try-restart "$unit"'; do
		grep -qF -- "$want" <<<"$scripts" || fail "lookahead-$name: scriptlets lack: $want"
	done
	[ "$failures" = "$before" ] && ok "lookahead-$name: scriptlets create the user, preset on install, stop+disable on erase, try-restart on upgrade"
done
[ -z "$(rpmq --scripts "$(pkgfile "$tmp/v1" lookahead "$rel")")" ] && ok "lookahead (CLI): no scriptlets" || fail "lookahead (CLI) has scriptlets"
rpmq --recommends "$(pkgfile "$tmp/v1" lookahead-broker "$rel")" | grep -qx lookahead && ok "lookahead-broker recommends the CLI" || fail "lookahead-broker does not recommend lookahead"
dups=$(for f in "$tmp"/v1/*.rpm; do rpmq --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$f"; done | grep -v '^d' | awk '{print $2}' | sort | uniq -d)
[ -z "$dups" ] && ok "no file is in two packages" || fail "files in two packages: $dups"

# ---- DEBs (when dpkg-deb is here): fields, conffiles, maintainer scripts
if [ ${#debs[@]} -gt 0 ]; then
	for name in agent broker; do
		f=$tmp/v1/lookahead-${name}_$ver-${rel}_amd64.deb
		before=$failures
		[ "$(dpkg-deb -f "$f" Package Version)" = "Package: lookahead-$name
Version: $ver-$rel" ] || fail "lookahead-$name.deb: $(dpkg-deb -f "$f" Package Version)"
		dpkg-deb -e "$f" "$tmp/deb-$name"
		grep -qx "/etc/lookahead/$name.yaml" "$tmp/deb-$name/conffiles" || fail "lookahead-$name.deb: config not a conffile"
		for s in preinst postinst prerm postrm; do
			[ -x "$tmp/deb-$name/$s" ] || fail "lookahead-$name.deb: no $s"
		done
		contents=$(dpkg-deb -c "$f")
		grep -q " ./usr/lib/systemd/system/lookahead-$name.service$" <<<"$contents" || fail "lookahead-$name.deb: no unit"
		[ "$failures" = "$before" ] && ok "lookahead-$name.deb: $ver-$rel, config is a conffile, maintainer scripts, unit"
	done
fi

# ---- scratch roots
# copy_bin ROOT BIN: BIN and the shared libraries it loads, into ROOT.
copy_bin() {
	local root=$1 bin=$2 real lib
	real=$(readlink -f "$bin")
	"${as_root[@]}" mkdir -p "$root$(dirname "$bin")"
	"${as_root[@]}" cp "$real" "$root$bin"
	for lib in $(ldd "$real" | grep -o '/[^ ]*'); do
		"${as_root[@]}" mkdir -p "$root$(dirname "$lib")"
		"${as_root[@]}" cp -n "$lib" "$root$lib"
	done
}
# make_root ROOT TOOLS...: a minimal tree where rpm can run scriptlets
# (chrooted): /bin/sh, the given tools, /dev/null, an /etc with only root.
make_root() {
	local root=$1 t
	shift
	"${as_root[@]}" mkdir -p "$root/etc" "$root/dev" "$root/tmp"
	for t in /bin/sh "$@"; do copy_bin "$root" "$t"; done
	"${as_root[@]}" mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null || "${as_root[@]}" touch "$root/dev/null"
	"${as_root[@]}" sh -c "cd '$root/etc' && echo 'root:x:0:0:root:/root:/bin/sh' >passwd && echo 'root:x:0:' >group &&
		echo 'root:*:19000:0:99999:7:::' >shadow && echo 'root:*::' >gshadow && chmod 600 shadow gshadow"
	"${as_root[@]}" rpm --root "$root" --dbpath /var/lib/rpm --initdb
}
# --nodeps: the scratch root's rpm database is empty, so nothing in it
# "provides" /bin/sh (which the scriptlets require) although the file is
# there. --nodeps skips only that dependency check; scriptlets still run.
R() { "${as_root[@]}" rpm --root "$root" --dbpath /var/lib/rpm "$@"; }

# systemctl_calls ROOT: the systemctl calls logged in ROOT since the last
# call of this function (empty when the root has no fake systemctl).
systemctl_calls() {
	[ -f "$1/systemctl.log" ] || return 0
	"${as_root[@]}" cat "$1/systemctl.log" | sort | tr '\n' ';'
	"${as_root[@]}" rm -f "$1/systemctl.log"
}
# expect_calls ROOT WHAT WANT: the logged systemctl calls are WANT.
expect_calls() {
	local got
	[ -x "$1/usr/bin/systemctl" ] || return 0
	got=$(systemctl_calls "$1")
	[ "$got" = "$3" ] && ok "$how: scriptlets on $2 ran: $got" || fail "$how: systemctl calls on $2: '$got', want '$3'"
}

check_install() {
	local root=$1 how=$2
	R -i --nodeps "$tmp"/v1/*.rpm 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "$how: install v1"; return; }
	grep -v 'should not be used directly\|assuming you know what you are doing' "$tmp/err" >&2 || true
	ok "$how: installed $(R -qa --qf '%{NAME}-%{VERSION}-%{RELEASE} ' | sort)"
	expect_calls "$root" install "--no-reload preset lookahead-agent.service;--no-reload preset lookahead-broker.service;daemon-reload;daemon-reload;"
	local name uid dir
	for name in agent broker; do
		uid=$(awk -F: -v u="lookahead-$name" '$1 == u {print $3}' "$root/etc/passwd")
		gid=$(awk -F: -v g="lookahead-$name" '$1 == g {print $3}' "$root/etc/group")
		[ -n "$uid" ] && [ -n "$gid" ] || { fail "$how: user or group lookahead-$name not created"; continue; }
		grep -q "^lookahead-$name:x:$uid:$gid:.*:/var/lib/lookahead/$name:/sbin/nologin$" "$root/etc/passwd" ||
			fail "$how: passwd entry of lookahead-$name: $(grep "^lookahead-$name:" "$root/etc/passwd")"
		[ "$uid" -lt 1000 ] || fail "$how: lookahead-$name uid $uid is not a system uid"
		dir=$(stat -c '%a %u %g' "$root/var/lib/lookahead/$name")
		[ "$dir" = "750 $uid $gid" ] && ok "$how: /var/lib/lookahead/$name is 0750 lookahead-$name ($uid:$gid)" || fail "$how: state dir is $dir, want 750 $uid $gid"
		dir=$(stat -c '%a %u %g' "$root/etc/lookahead/$name.yaml")
		[ "$dir" = "640 0 $gid" ] && ok "$how: /etc/lookahead/$name.yaml is 0640 root:lookahead-$name" || fail "$how: config is $dir, want 640 0 $gid"
	done
	local v
	v=$(R -V --nodeps lookahead-agent lookahead-broker lookahead 2>&1 || true)
	[ -z "$v" ] && ok "$how: rpm -V clean after install" || fail "$how: rpm -V after install: $v"
	v=$("$root/usr/bin/lookahead" --version 2>&1 || true)
	grep -qF "$ver-$rel" <<<"$v" && ok "$how: lookahead --version says $ver-$rel" || fail "$how: lookahead --version: $v"
	# the installed bash completions load and register (bash-completion
	# sources /usr/share/bash-completion/completions/NAME on first use);
	# what they offer is the binary's own answer (NAME __complete)
	local b
	for b in lookahead lookahead-agent lookahead-broker; do
		v=$(bash -c '. "$1" && complete -p "$2"' _ "$root/usr/share/bash-completion/completions/$b" "$b" 2>&1 || true)
		grep -qF -- "-F __start_$b $b" <<<"$v" && ok "$how: bash completion of $b registers" || fail "$how: bash completion of $b: $v"
		v=$("$root/usr/bin/$b" __complete "" 2>/dev/null || true)
		grep -q '^completion' <<<"$v" && grep -q '^help' <<<"$v" && ok "$how: $b completes its commands" || fail "$how: $b __complete: $v"
	done

	# edit the agent's config, leave the broker's alone, upgrade
	echo "site: edited-by-admin" | "${as_root[@]}" tee -a "$root/etc/lookahead/agent.yaml" >/dev/null
	v=$(R -V --nodeps lookahead-agent 2>&1 || true)
	[ "$v" = "S.5....T.  c /etc/lookahead/agent.yaml" ] && ok "$how: rpm -V sees the edit: $v" || fail "$how: rpm -V after edit: $v"
	R -U --nodeps "$tmp"/v2/*.rpm 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "$how: upgrade to v2"; return; }
	grep -v 'should not be used directly\|assuming you know what you are doing' "$tmp/err" >&2 || true
	expect_calls "$root" upgrade "daemon-reload;daemon-reload;daemon-reload;daemon-reload;try-restart lookahead-agent.service;try-restart lookahead-broker.service;"
	v=$(R -q --qf '%{VERSION}-%{RELEASE}\n' lookahead-agent lookahead-broker lookahead | sort -u)
	[ "$v" = "$ver-$next_rel" ] && ok "$how: upgraded to $v" || fail "$how: after upgrade: $v"
	grep -qx 'site: edited-by-admin' "$root/etc/lookahead/agent.yaml" && ok "$how: the edit of agent.yaml survived the upgrade" || fail "$how: edit of agent.yaml lost"
	if cmp -s "$root/etc/lookahead/agent.yaml.rpmnew" "$tmp/src2/packaging/config/agent.yaml"; then
		ok "$how: the new default is agent.yaml.rpmnew"
	else
		fail "$how: agent.yaml.rpmnew missing or not the new default"
	fi
	if cmp -s "$root/etc/lookahead/broker.yaml" "$tmp/src2/packaging/config/broker.yaml" && [ ! -e "$root/etc/lookahead/broker.yaml.rpmnew" ]; then
		ok "$how: the unedited broker.yaml was replaced by the new default (no .rpmnew)"
	else
		fail "$how: unedited broker.yaml not updated in place"
	fi
	v=$(R -V --nodeps lookahead-agent lookahead-broker lookahead 2>&1 || true)
	[ "$v" = "S.5....T.  c /etc/lookahead/agent.yaml" ] && ok "$how: rpm -V after upgrade: only the edited config differs" || fail "$how: rpm -V after upgrade: $v"
	for name in agent broker; do
		n=$(grep -c "^lookahead-$name:" "$root/etc/passwd")
		[ "$n" = 1 ] || fail "$how: $n passwd entries for lookahead-$name after upgrade"
	done

	# the packaged configs load in the packaged daemons, and the units'
	# command lines are ones the binaries accept
	v=$("$root/usr/bin/lookahead-broker" config --config "$root/etc/lookahead/broker.yaml" 2>&1) &&
		ok "$how: lookahead-broker loads the packaged broker.yaml" || fail "$how: broker.yaml does not load: $v"
	sed 's/^site: edited-by-admin$//; s/^site: ""/site: alpha/' "$root/etc/lookahead/agent.yaml.rpmnew" >"$tmp/agent-alpha.yaml"
	v=$("$root/usr/bin/lookahead-agent" check --config "$tmp/agent-alpha.yaml" 2>&1 || true)
	grep -Eq '^ok +config +valid' <<<"$v" && ok "$how: lookahead-agent finds the packaged agent.yaml valid (with a site set)" || fail "$how: agent.yaml not valid: $v"
	# a Slurm site: the packaged agent.yaml with backend slurm and a real
	# slurm.conf loads (its policy read from it)
	sed 's/^backend: torque/backend: slurm/; s#^  conf: /etc/slurm/slurm.conf#  conf: '"$PWD"'/slurm/testdata/slurm.conf#' \
		"$tmp/agent-alpha.yaml" >"$tmp/agent-slurm.yaml"
	v=$("$root/usr/bin/lookahead-agent" config --config "$tmp/agent-slurm.yaml" 2>&1) &&
		grep -q '"backend": "slurm"' <<<"$v" && ok "$how: the packaged agent.yaml loads as a Slurm site (backend slurm)" ||
		fail "$how: agent.yaml as a Slurm site: $v"
	for name in agent broker; do
		exec_start=$(sed -n 's/^ExecStart=//p' "$root/usr/lib/systemd/system/lookahead-$name.service")
		# shellcheck disable=SC2086
		v=$("$root"$exec_start --help 2>&1) && ok "$how: lookahead-$name accepts its unit's command line: $exec_start" ||
			fail "$how: $exec_start --help: $v"
	done

	if command -v systemd-analyze >/dev/null 2>&1; then
		"${as_root[@]}" cp -an /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/" 2>/dev/null || true
		v=$(systemd-analyze verify --root="$root" lookahead-agent.service lookahead-broker.service 2>&1 || echo "exit status $?")
		[ -z "$v" ] && ok "$how: systemd-analyze verify: units clean" || fail "$how: systemd-analyze verify: $v"
		# with the Slurm site's drop-in, as docs/slurm.md installs it
		"${as_root[@]}" mkdir -p "$root/etc/systemd/system/lookahead-agent.service.d"
		"${as_root[@]}" cp "$root/usr/share/doc/lookahead-agent/slurm-dropin.conf" "$root/etc/systemd/system/lookahead-agent.service.d/slurm.conf"
		v=$(systemd-analyze verify --root="$root" lookahead-agent.service 2>&1 || echo "exit status $?")
		[ -z "$v" ] && ok "$how: systemd-analyze verify: the agent with the Slurm drop-in is clean" || fail "$how: Slurm drop-in: $v"
		"${as_root[@]}" rm -r "$root/etc/systemd/system/lookahead-agent.service.d"
		# the check itself must be able to fail: a misspelt directive
		sed 's/^NoNewPrivileges=/NoNewPrivilege=/' "$root/usr/lib/systemd/system/lookahead-agent.service" |
			"${as_root[@]}" tee "$root/usr/lib/systemd/system/lookahead-typo.service" >/dev/null
		v=$(systemd-analyze verify --root="$root" lookahead-typo.service 2>&1 || true)
		[ -n "$v" ] && ok "$how: systemd-analyze verify catches a misspelt directive" || fail "$how: systemd-analyze verify missed a typo"
	else
		echo "skip systemd-analyze not available"
	fi

	R -e lookahead-agent lookahead-broker lookahead 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "$how: erase"; return; }
	expect_calls "$root" erase "--no-reload disable --now lookahead-agent.service;--no-reload disable --now lookahead-broker.service;daemon-reload;daemon-reload;"
	[ -z "$(R -qa)" ] && [ ! -e "$root/usr/bin/lookahead-agent" ] && ok "$how: erased" || fail "$how: files left after erase"
	grep -qx 'site: edited-by-admin' "$root/etc/lookahead/agent.yaml.rpmsave" 2>/dev/null &&
		ok "$how: the edited config is kept as agent.yaml.rpmsave on erase" || fail "$how: edited config not saved on erase"
}

root=$tmp/root-sysusers
make_root "$root" /usr/bin/systemd-sysusers
check_install "$root" "sysusers root"
root=$tmp/root-useradd
make_root "$root" /usr/bin/getent /usr/sbin/groupadd /usr/sbin/useradd
# This root also "runs systemd": a systemctl that logs its arguments, so the
# scriptlets' systemctl calls (with rpm's real $1) can be checked.
"${as_root[@]}" mkdir -p "$root/run/systemd/system" "$root/usr/bin"
printf '#!/bin/sh\necho "$*" >>/systemctl.log\n' | "${as_root[@]}" tee "$root/usr/bin/systemctl" >/dev/null
"${as_root[@]}" chmod 755 "$root/usr/bin/systemctl"
check_install "$root" "useradd root"

if [ "$failures" -gt 0 ]; then
	echo "test-packaging: $failures failure(s)" >&2
	exit 1
fi
echo "test-packaging: all checks passed"
