#!/usr/bin/env bash
# The multi-node capture (files mn-*): two nodes n1 and n2 of 4 CPUs, each
# its own slurmd on this host (slurm-multinode.conf). A reservation's ACL
# widened by hand; one core of n1 made busy by a running job and an uneven
# core reservation before and after slurmctld prints its CoreIDs; the
# answers check reads (ping, partitions, config) and the refusals it
# explains; a numeric sbatch --uid; a reservation that a SIGKILL of
# slurmctld brings back after its deletion; slurmctld and munged down; the
# cluster under select/linear. Run as root with SLURM_CONF, OUT, USER2 as
# for capture.sh, CTLD_PIDFILE (slurm.conf's SlurmctldPidFile),
# MUNGE_PIDFILE and MUNGED_CMD (the command line that starts munged again),
# on a cluster started with empty state. Not run by the tests.
set -uo pipefail
: "${SLURM_CONF:?}" "${OUT:?}" "${USER2:?}" "${CTLD_PIDFILE:?}" "${MUNGE_PIDFILE:?}" "${MUNGED_CMD:?}"
cap() { # as in capture.sh, names prefixed mn-
	local name=mn-$1; shift
	case $name in *.json) ;; *) name=$name.txt ;; esac
	"$@" >"$OUT/$name" 2>&1
	echo $? >"$OUT/${name%.*}.rc"
}
at() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S; }
ctld_up() { for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q UP && return; sleep 1; done; }
ctld_stop() {
	kill "$(cat "$CTLD_PIDFILE")"
	for _ in $(seq 30); do scontrol ping >/dev/null 2>&1 || break; sleep 1; done
}

cap ping-up scontrol ping
cap show-config scontrol show config
cap show-partition-batch scontrol show partition batch
cap show-partition-none scontrol show partition nosuch

# An idle cluster: a reservation on n2 whose ACL is widened by hand, one
# change at a time, each undone after.
scontrol create reservation reservationname=la.w1 users="$USER2" starttime="$(at '+1 hour')" duration=20 \
	nodes=n2 corecnt=2 >/dev/null
cap update-users scontrol update reservationname=la.w1 users+=root
cap show-reservation-users-widened scontrol show reservation la.w1
scontrol update reservationname=la.w1 users="$USER2"
cap update-flags scontrol update reservationname=la.w1 flags+=MAGNETIC
cap show-reservation-magnetic scontrol show reservation la.w1
scontrol update reservationname=la.w1 flags-=MAGNETIC
cap update-accounts scontrol update reservationname=la.w1 accounts=root
cap show-reservation-accounts scontrol show reservation la.w1
scontrol update reservationname=la.w1 accounts=
cap update-partition scontrol update reservationname=la.w1 partition=short
cap show-reservation-partition scontrol show reservation la.w1
scontrol delete reservationname=la.w1

# One core of n1 busy (root's job, 60 min), then an uneven core
# reservation: 3 cores of n1, 4 of n2.
sbatch -o /dev/null -n 1 -w n1 -t 60 -J busy --wrap "sleep 3600" >/dev/null
for _ in $(seq 30); do [ "$(squeue -h -o %T)" = RUNNING ] && break; sleep 1; done
cap sinfo-busy.json sinfo --json
cap squeue-busy.json squeue --json
start=$(at '+2 min') end=$(at '+22 min')
cap create-uneven scontrol create reservation reservationname=la.u1 users="$USER2" \
	starttime="$start" endtime="$end" nodes=n1,n2 corecnt=3,4
cap show-reservation-uneven-nocoreids scontrol show reservation
for _ in $(seq 60); do scontrol show reservation la.u1 | grep -q CoreIDs && break; sleep 0.5; done
cap show-reservation-uneven-coreids scontrol show reservation
cap update-uneven-busy scontrol update reservationname=la.u1 users+=root

# Refusals and answers the agent and check tell apart.
cap create-unknown-user scontrol create reservation reservationname=la.x1 users=no-such-user-here \
	starttime="$(at '+3 hours')" duration=10 nodes=n2 corecnt=1
cap create-wrong-partition scontrol create reservation reservationname=la.x2 users="$USER2" \
	starttime="$(at '+3 hours')" duration=10 nodes=n2 corecnt=1 partition=nosuch
cap sbatch-uid-numeric sbatch --parsable --uid="$(id -u "$USER2")" -o /dev/null -n 1 -t 1 -J by-uid --wrap "id -un"
sleep 3
cap squeue-uid-numeric.json squeue --json

# Deleted, then slurmctld killed before it saved that: the reservation
# comes back.
scontrol create reservation reservationname=la.r1 users="$USER2" starttime="$(at '+4 hours')" duration=10 \
	nodes=n2 corecnt=1 >/dev/null
sleep 8 # saved
cap delete-before-kill scontrol delete reservationname=la.r1
kill -9 "$(cat "$CTLD_PIDFILE")"
sleep 1
slurmctld
ctld_up
cap show-reservation-resurrected scontrol show reservation la.r1

# slurmctld down, then munged down: what ping and the clients say.
ctld_stop
cap ping-down scontrol ping
cap sinfo-down.json sinfo --json
slurmctld
ctld_up
kill "$(cat "$MUNGE_PIDFILE")"
sleep 1
cap ping-nomunge scontrol ping
$MUNGED_CMD
ctld_up

# The same cluster under select/linear (a copy of slurm.conf beside it,
# every job and reservation gone first): what check reads and what a core
# reservation gets. Then back to the original.
squeue -h -o %i | xargs -r scancel
for r in $(scontrol show reservation | sed -n 's/^ReservationName=\([^ ]*\).*/\1/p'); do scontrol delete reservationname="$r"; done
sleep 5
sed 's|^SelectType=.*|SelectType=select/linear|; /^SelectTypeParameters=/d' "$SLURM_CONF" >"$SLURM_CONF.linear"
ctld_stop
slurmctld -f "$SLURM_CONF.linear"
ctld_up
cap linear-show-config scontrol show config
cap linear-create-cores scontrol create reservation reservationname=la.l1 users="$USER2" \
	starttime="$(at '+2 hours')" duration=10 nodes=n1,n2 corecnt=1,2
scontrol delete reservationname=la.l1 >/dev/null 2>&1
ctld_stop
slurmctld
ctld_up
