#!/usr/bin/env bash
# How the files beside this script were captured from a real private Slurm
# 22.05.8 (Debian bookworm packages) on loopback; see README.md for the
# cluster. Run as root with SLURM_CONF pointing at that cluster's slurm.conf,
# OUT a directory for the answers, USER2 a second Unix user (not in any
# reservation's users=). Each answer is saved as <name>.txt or <name>.json
# (stdout+stderr) and <name>.rc (exit status). Not run by the tests.
set -uo pipefail
: "${SLURM_CONF:?}" "${OUT:?}" "${USER2:?}"
node=$(hostname)
cap() { # cap NAME CMD... : run CMD, keep its output and exit status
	local name=$1; shift
	case $name in *.json) ;; *) name=$name.txt ;; esac
	"$@" >"$OUT/$name" 2>&1
	echo $? >"$OUT/${name%.*}.rc"
}
as2() { runuser -u "$USER2" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
at() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S; } # slurm reads local time; the machine is UTC
job() { # job SBATCH-ARGS... : a 3000 s sleep, print its job id
	sbatch --parsable -o /dev/null "$@" --wrap "sleep 3000"
}


# An empty cluster.
cap sinfo-empty.json sinfo --json
cap squeue-empty.json squeue --json
cap show-reservation-none scontrol show reservation
cap show-node-idle scontrol show node

# Reservations: one for root on 4 cores, one maintenance over all nodes.
cap create-reservation-ok scontrol create reservation reservationname=grid-r1 users=root \
	starttime="$(at '+2 hours')" duration=30 nodecnt=1 corecnt=4 partition=batch
cap show-reservation-one scontrol show reservation
cap create-reservation-maint scontrol create reservation reservationname=maint-1 users=root \
	flags=maint,ignore_jobs starttime="$(at '+3 hours')" duration=60 nodes=ALL
cap show-reservation-two scontrol show reservation
# One whose users= is the second user (root creates it; only that user may enter).
cap create-reservation-user2 scontrol create reservation reservationname=grid-u2 users="$USER2" \
	starttime="$(at '+4 hours')" duration=20 nodecnt=1 corecnt=2 partition=batch

# Overlap: a second 8-core reservation over the same window on the 8-core node.
cap create-reservation-overlap scontrol create reservation reservationname=grid-r2 users=root \
	starttime="$(at '+125 min')" duration=10 nodecnt=1 corecnt=8 partition=batch
# Not an operator: a non-root user cannot create reservations.
cap create-reservation-notadmin as2 scontrol create reservation reservationname=grid-r3 users="$USER2" \
	starttime="$(at '+1 hour')" duration=10 nodecnt=1 corecnt=1

# Jobs: running ones, a pending one (resources), one bound to grid-r1.
j1=$(job -n 2 -t 60 -J run-a)
j2=$(job -n 2 -t 50 -J run-b -p short)
j3=$(as2 sbatch --parsable -o /dev/null -n 2 -t 30 -J run-user2 --wrap "sleep 3000")
sleep 3 # the three start on the 8-core node (6 cores)
cap sbatch-reservation-ok sbatch -o /dev/null -n 4 -t 20 -J in-r1 --reservation=grid-r1 --wrap "sleep 60"
cap sbatch-reservation-denied as2 sbatch -o /dev/null -n 1 -t 5 -J deny --reservation=grid-r1 --wrap "sleep 1"
j5=$(job -n 6 -t 120 -J pend-big)
j6=$(as2 sbatch --parsable -o /dev/null -n 8 -t 45 -J pend-user2 --wrap "sleep 3000")
cap squeue-start-early squeue --start # before backfill's first pass over them
sleep 12 # bf_interval=5: backfill plans the pending jobs
cap squeue.json squeue --json
cap squeue-start squeue --start
cap squeue-default squeue
cap sinfo.json sinfo --json
cap show-node-mixed scontrol show node
cap show-job scontrol show job

# In use: a reservation over cores that running jobs hold (no ignore_jobs).
cap create-reservation-busy scontrol create reservation reservationname=grid-r4 users=root \
	starttime=now duration=10 nodes="$node" partition=batch
# A reservation with a queued job cannot be deleted.
cap delete-reservation-inuse scontrol delete reservationname=grid-r1
cap scancel-ok scancel "$j5"
cap scancel-unknown scancel 999999
cap delete-reservation-ok scontrol delete reservationname=maint-1
cap show-reservation-after-delete scontrol show reservation

# Completing: a short job whose epilog (sleep 8) keeps the node completing.
scancel "$j1" "$j2" "$j3" "$j6"
sleep 1
jc=$(sbatch --parsable -o /dev/null -n 8 -t 5 -J short --wrap "true")
sleep 3
cap squeue-completing.json squeue --json
cap sinfo-completing.json sinfo --json
cap show-node-completing scontrol show node
sleep 10
scancel -u root; scancel -u "$USER2"
