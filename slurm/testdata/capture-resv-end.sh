#!/usr/bin/env bash
# The third capture (files resv-end-*), on the same cluster as capture.sh
# (README.md), after a fresh start with an emptied state directory: what
# happens to jobs still pending in a reservation when it ends. Run as root
# with SLURM_CONF, OUT, USER2 as for capture.sh. Not run by the tests.
set -uo pipefail
: "${SLURM_CONF:?}" "${OUT:?}" "${USER2:?}"
cap() {
	local name=resv-end-$1; shift
	case $name in *.json) ;; *) name=$name.txt ;; esac
	"$@" >"$OUT/$name" 2>&1
	echo $? >"$OUT/${name%.*}.rc"
}
as2() { runuser -u "$USER2" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
at() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S; }

# A 1-minute, 2-core reservation for USER2 starting in 5 s; into it: a held
# job (-H), and a job asking for more cores (4) than it has.
cap create scontrol create reservation reservationname=grid-e users="$USER2" \
	starttime="$(at '+5 sec')" duration=1 nodecnt=1 corecnt=2 partition=batch
cap sbatch-held as2 sbatch -H -o /dev/null -n 1 -t 1 -J held --reservation=grid-e --wrap "sleep 1"
cap sbatch-too-big as2 sbatch -o /dev/null -n 4 -t 1 -J too-big --reservation=grid-e --wrap "sleep 1"
sleep 15
cap squeue-during.json squeue --json
cap squeue-during squeue -o "%i %j %T %r %v"
sleep 65
cap show-reservation-after scontrol show reservation
cap squeue-after.json squeue --json
cap squeue-after squeue -o "%i %j %T %r %v"
# slurmctld purges an ended reservation on a periodic pass: wait for it.
for _ in $(seq 60); do scontrol show reservation | grep -q grid-e || break; sleep 5; done
date -u +"purged by %T" >"$OUT/resv-end-purged.txt"
cap show-reservation-purged scontrol show reservation
cap squeue-purged.json squeue --json
cap squeue-purged squeue -o "%i %j %T %r %v"
cap show-job-purged scontrol show job
cap scancel-held scancel 1 2
