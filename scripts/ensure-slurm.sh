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
. "$(dirname "$0")/apt-install.sh"
apt_install ensure-slurm slurmctld slurmd slurm-client munge || exit 1
have_all || { echo "ensure-slurm: packages installed but a program is not on PATH" >&2; exit 1; }
report
