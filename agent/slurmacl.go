package agent

import (
	"fmt"
	"slices"
	"strings"

	"lookahead/slurm"
	"lookahead/wire"
)

// What a grid reservation on a Slurm site must be, whole (the read-back
// after a create, the agent's poll and the broker's audit all compare
// it): the mapped local user alone in Users=, no Groups= and no
// Accounts=, no flag but those slurmctld sets itself, the configured
// partition (when slurm.partition is set), the nodes and cores asked, the
// exact times. A reservation widened by hand (users+=mallory,
// flags+=MAGNETIC) is not the job's: the read-back refuses it, the poll
// repairs it, the audit reports it drifted (field acl).

// slurmOwnFlags are the flags slurmctld sets by itself on a reservation
// the agent made (SPEC_NODES: made on named nodes; output only).
var slurmOwnFlags = []string{"SPEC_NODES"}

// SlurmExtra is what a listed reservation carries that the agent never
// sets: every flag but slurmOwnFlags (MAGNETIC lets in jobs that did not
// ask for it, FLEX lets the job out and others in, PURGE_COMP deletes it
// early, DAILY repeats it, …), and a partition other than the configured
// one. Pure.
func SlurmExtra(r slurm.Reservation, partition string) []string {
	var out []string
	for _, f := range r.Flags {
		if !slices.Contains(slurmOwnFlags, strings.ToUpper(f)) {
			out = append(out, "flag "+f)
		}
	}
	if partition != "" && r.Partition != partition {
		out = append(out, fmt.Sprintf("partition %s (slurm.partition is %s)", r.Partition, partition))
	}
	return out
}

// slurmIdentity is the ACL a listed reservation admits: every user of
// Users= (a widened one reads "alice01,mallory"; a denying one "-bob"),
// Groups= and Accounts=, each comma-joined.
func slurmIdentity(r slurm.Reservation) wire.Identity {
	return wire.Identity{User: strings.Join(r.Users, ","), Group: strings.Join(r.Groups, ","), Account: strings.Join(r.Accounts, ",")}
}

// SlurmDiff says how a listed reservation differs from the request ("" when
// it does not): its times; its ACL, whole (users exactly the mapped user,
// no groups, no accounts, nothing Extra); its cores per node — or, while
// slurmctld has not printed them (w.CoresUnknown), its node set and total.
// Pure.
func SlurmDiff(spec ReserveSpec, w wire.Reservation) string {
	var d []string
	if w.Start != spec.Start || w.End != spec.End {
		d = append(d, fmt.Sprintf("times [%d, %d), asked [%d, %d)", w.Start, w.End, spec.Start, spec.End))
	}
	if w.Identity.User != spec.Identity.User {
		d = append(d, fmt.Sprintf("users %q, asked %q alone", w.Identity.User, spec.Identity.User))
	}
	if w.Identity.Group != "" || w.Identity.Account != "" {
		d = append(d, fmt.Sprintf("groups %q, accounts %q, asked none", w.Identity.Group, w.Identity.Account))
	}
	if len(w.Extra) > 0 {
		d = append(d, strings.Join(w.Extra, ", ")+", never set by lookahead")
	}
	if !wire.SameNodes(wire.Reservation{Nodes: spec.Nodes}, w) {
		d = append(d, fmt.Sprintf("cores %s, asked %s", coresString(w), nodesKey(spec.Nodes)))
	}
	return strings.Join(d, "; ")
}

// coresString writes a listed reservation's cores: per node, or its total
// over its nodes while the per-node counts are not printed.
func coresString(w wire.Reservation) string {
	if !w.CoresUnknown {
		return nodesKey(w.Nodes)
	}
	total, names := 0, make([]string, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		total += n.Procs
		names = append(names, n.Node)
	}
	slices.Sort(names)
	return fmt.Sprintf("%d over %s (per node not printed yet)", total, strings.Join(names, ","))
}

// slurmRefusal is slurmctld's refusal of a request, or the agent's own
// on its behalf: an ErrScheduler (answered with code scheduler) whose text
// does not repeat the word the code already says.
type slurmRefusal struct{ msg string }

func (e slurmRefusal) Error() string        { return e.msg }
func (e slurmRefusal) Is(target error) bool { return target == ErrScheduler }

func slurmRefused(format string, args ...any) error {
	return slurmRefusal{fmt.Sprintf(format, args...)}
}
