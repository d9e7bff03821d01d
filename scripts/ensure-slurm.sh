#!/usr/bin/env bash
# Makes sure Debian's Slurm daemons, clients and munge are installed for the
# tests that start a private Slurm on loopback (slurm/slurmtest): does nothing
# when slurmctld, slurmd, sinfo and munged are already on PATH, else installs
# slurmctld, slurmd, slurm-client and munge with apt-get (apt-get update
# once, then apt-get install -y) as root or with passwordless sudo. The
# packages start no service. Prints the Slurm version on success; exits 1
# with the reason on stderr where it cannot install them — the tests then
# skip and say why.
set -euo pipefail

# The daemons live in /usr/sbin, which a non-login PATH may lack.
PATH="$PATH:/usr/sbin:/sbin"
have_all() {
	local b
	for b in slurmctld slurmd sinfo squeue scontrol sbatch scancel munged mungekey; do
		command -v "$b" >/dev/null 2>&1 || return 1
	done
}

report() {
	slurmd -V
}

if have_all; then
	report
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-slurm: slurm or munge is missing and there is no apt-get to install them" >&2
	exit 1
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		echo "ensure-slurm: slurm or munge is missing; installing them needs root or passwordless sudo" >&2
		exit 1
	fi
fi
echo "ensure-slurm: installing slurmctld slurmd slurm-client munge with apt-get" >&2
if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; then
	echo "ensure-slurm: apt-get update failed" >&2
	exit 1
fi
if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	slurmctld slurmd slurm-client munge >/dev/null; then
	echo "ensure-slurm: apt-get could not install slurmctld slurmd slurm-client munge" >&2
	exit 1
fi
have_all || { echo "ensure-slurm: packages installed but a program is not on PATH" >&2; exit 1; }
report
