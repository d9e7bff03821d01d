#!/usr/bin/env bash
# The second capture (files lifecycle-*), on the same cluster as capture.sh
# (README.md), right after a fresh start with empty state: answers not in the
# first capture and a reservation's life — active with its job running, a
# slurmctld restart (state kept), a reservation ending with its job pending.
# Run as root with SLURM_CONF, OUT, USER2 as for capture.sh and CTLD_PIDFILE
# the SlurmctldPidFile of slurm.conf. Not run by the tests.
set -uo pipefail
: "${SLURM_CONF:?}" "${OUT:?}" "${USER2:?}" "${CTLD_PIDFILE:?}"
cap() { # as in capture.sh, names prefixed lifecycle-
	local name=lifecycle-$1; shift
	case $name in *.json) ;; *) name=$name.txt ;; esac
	"$@" >"$OUT/$name" 2>&1
	echo $? >"$OUT/${name%.*}.rc"
}
as2() { runuser -u "$USER2" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
at() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S; }
state() { squeue -h -j "$1" -o %T; }

# Answers not in the first capture.
scontrol create reservation reservationname=dup users=root starttime="$(at '+5 hours')" duration=10 nodecnt=1 corecnt=1 >/dev/null
cap create-reservation-exists scontrol create reservation reservationname=dup users=root \
	starttime="$(at '+6 hours')" duration=10 nodecnt=1 corecnt=1
scontrol delete reservationname=dup
cap delete-reservation-unknown scontrol delete reservationname=no-such
cap sbatch-uid sbatch --uid="$USER2" -o /dev/null -n 1 -t 5 -J as-user2 --wrap "sleep 1"

# A reservation for USER2 starting in 20 s; USER2's job queued in it.
start=$(at '+20 sec')
cap create-reservation-soon scontrol create reservation reservationname=grid-a users="$USER2" \
	starttime="$start" duration=10 nodecnt=1 corecnt=4 partition=batch
job=$(as2 sbatch --parsable -o /dev/null -n 4 -t 5 -J in-a --reservation=grid-a --wrap "sleep 3000")
for _ in $(seq 60); do [ "$(state "$job")" = RUNNING ] && break; sleep 1; done
echo "reservation start $start; job $job: $(squeue -h -j "$job" -o '%T %S')" >"$OUT/lifecycle-start-delay.txt"
cap show-reservation-active scontrol show reservation
cap squeue-active.json squeue --json
cap show-node-active scontrol show node
cap show-job-active scontrol show job "$job"

# slurmctld restarted on its saved state: what survives.
kill "$(cat "$CTLD_PIDFILE")"
for _ in $(seq 30); do scontrol ping >/dev/null 2>&1 || break; sleep 1; done
slurmctld
for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 1; done
sleep 3
cap show-reservation-restarted scontrol show reservation
cap squeue-restarted.json squeue --json
scancel "$job"

# A reservation that ends with its job still pending: the job's 5 min limit
# does not fit in the 1 min reservation.
cap create-reservation-short scontrol create reservation reservationname=grid-b users="$USER2" \
	starttime="$(at '+5 sec')" duration=1 nodecnt=1 corecnt=2 partition=batch
jb=$(as2 sbatch --parsable -o /dev/null -n 2 -t 5 -J too-long --reservation=grid-b --wrap "sleep 1")
sleep 20
cap squeue-short-during.json squeue --json
sleep 55
cap squeue-short-after.json squeue --json
cap show-reservation-short-after scontrol show reservation
cap show-job-short-after scontrol show job "$jb"
scancel -u root; scancel -u "$USER2"
