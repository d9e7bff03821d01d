package agent

import (
	"slices"
	"strings"

	"lookahead/maui"
	"lookahead/wire"
)

// What the agent does when the scheduler lost or altered a reservation it
// made (a Maui restart: a kill -9 loses what changed since Maui's last
// checkpoint, and a clean restart restores reservations whose ACL no
// longer admits the part, "USER==alice+*" read back as "alice++*").
//
// The agent remembers every grid reservation it made and has not
// released (heldLedger, in Config.HoldState so it survives the agent's own
// restart) and, at every forecast cycle, compares it with what the
// scheduler lists. Each one missing or altered is re-created with the same
// nodes, end, identity and binding account (repaired), or, when the
// scheduler refuses, reported lost to the broker, which plans the job
// again.

// heldEntry is one grid job's reservations as the agent made them.
type heldEntry struct {
	Spec         ReserveSpec        `json:"spec"`
	Reservations []wire.Reservation `json:"reservations"`
}

// heldLedger is the grid reservations the agent made and holds, by job,
// and those it released (until their end: a kill -9 of Maui brings back
// what was released since its last checkpoint).
type heldLedger struct {
	Version  int                      `json:"version"`
	Jobs     map[string]heldEntry     `json:"jobs"`
	Released map[string]releasedEntry `json:"released,omitempty"`
	// Foreign is the local jobs the agent holds because a grid
	// reservation would admit them (foreign.go), by local id.
	Foreign map[string]foreignHold `json:"foreign,omitempty"`
}

// releasedEntry is a grid job's reservations the agent released: if the
// scheduler lists the job again before End, they came back (a revenant)
// and are released again.
type releasedEntry struct {
	IDs []string `json:"ids"`
	End int64    `json:"end"`
}

const heldLedgerVersion = 1

// Repair kinds: why a held reservation is re-created.
const (
	HeldMissing = "missing"     // the scheduler does not list it
	HeldAltered = "acl altered" // listed with another ACL, nodes or times
)

// heldCheck is what to do about one held job.
type heldCheck struct {
	Job    string
	Why    string // HeldMissing or HeldAltered
	Detail string
	Entry  heldEntry
	// ACLOnly: altered in its ACL alone (identity or Extra), its nodes,
	// times and binding as made.
	ACLOnly bool
}

// revenants lists the jobs whose reservations the agent released but the
// scheduler lists again (a kill -9 of Maui restores what was released
// since its last checkpoint), in job order. Pure.
func revenants(l heldLedger, listed []wire.Reservation, now int64) []string {
	var out []string
	for _, r := range listed {
		rel, ok := l.Released[r.Job]
		if _, held := l.Jobs[r.Job]; ok && !held && rel.End > now && !slices.Contains(out, r.Job) {
			out = append(out, r.Job)
		}
	}
	slices.Sort(out)
	return out
}

// otherBinds is the binding accounts of every job the ledger holds but
// job: a binding picked for job must not be one of them (a lost
// reservation not yet re-created still owns its account: its part was
// told to submit with it).
func otherBinds(l heldLedger, job string) []string {
	var out []string
	for j, e := range l.Jobs {
		if j != job && e.Spec.Bind != "" && !slices.Contains(out, e.Spec.Bind) {
			out = append(out, e.Spec.Bind)
		}
	}
	slices.Sort(out)
	return out
}

// checkHeld compares the ledger with what the scheduler lists at now
// (listed: its lookahead reservations): entries that ended are dropped
// (expired), entries whose reservations are missing or differ in ACL
// (identity and binding), nodes or times beyond tol seconds are to be
// repaired. Pure; results in job order.
func checkHeld(l heldLedger, listed []wire.Reservation, now, tol int64) (repair []heldCheck, expired []string) {
	by := map[string][]wire.Reservation{}
	for _, r := range listed {
		by[r.Job] = append(by[r.Job], r)
	}
	for job, e := range l.Jobs {
		if e.Spec.End <= now {
			expired = append(expired, job)
			continue
		}
		have, ok := by[job]
		switch {
		case !ok:
			repair = append(repair, heldCheck{Job: job, Why: HeldMissing, Entry: e,
				Detail: "the scheduler no longer lists " + ids(e.Reservations)})
		default:
			if d := heldDiff(e.Reservations, have, tol); d != "" {
				repair = append(repair, heldCheck{Job: job, Why: HeldAltered, Entry: e, Detail: d, ACLOnly: aclOnly(e.Reservations, have, tol)})
			}
		}
	}
	slices.SortFunc(repair, func(a, b heldCheck) int { return strings.Compare(a.Job, b.Job) })
	slices.Sort(expired)
	return repair, expired
}

// heldDiff says how what the scheduler lists differs from what the agent
// made ("" when alike): identity, binding options, anything the agent
// never sets (Extra), nodes (their set and total only while the site
// does not list the per-node counts: wire.SameNodes), times.
func heldDiff(made, have []wire.Reservation, tol int64) string {
	if len(made) != len(have) {
		return "listed as " + ids(have) + ", made as " + ids(made)
	}
	for i, m := range made {
		h := have[i]
		switch {
		case m.Identity != h.Identity:
			d := "ACL " + identityString(h.Identity) + ", made " + identityString(m.Identity)
			if restoredIdentity(m.Identity, h.Identity) {
				d += " (restored by a Maui restart, which gives a required name back with a '+': it admits no job of " + m.Identity.User + ")"
			}
			return d
		case BindOf(m.Submit) != BindOf(h.Submit):
			return "binding account " + BindOf(h.Submit) + ", made " + BindOf(m.Submit)
		case len(h.Extra) > 0:
			return "ACL wider than made: " + strings.Join(h.Extra, ", ")
		case !wire.SameNodes(m, h):
			return "nodes " + nodesKey(h.Nodes) + ", made " + nodesKey(m.Nodes)
		case abs(m.Start-h.Start) > tol || abs(m.End-h.End) > tol:
			return "times moved"
		}
	}
	return ""
}

// aclOnly says whether what the scheduler lists differs from what the
// agent made (heldDiff said it does) in the ACL alone: the same
// reservations with the same binding, nodes and times. Pure.
func aclOnly(made, have []wire.Reservation, tol int64) bool {
	if len(made) != len(have) {
		return false
	}
	for i, m := range made {
		h := have[i]
		if BindOf(m.Submit) != BindOf(h.Submit) || !wire.SameNodes(m, h) || abs(m.Start-h.Start) > tol || abs(m.End-h.End) > tol {
			return false
		}
	}
	return true
}

// BindOf is the account a reservation's parts are charged to, read from
// its submit options ("-A la.acct0 -W ..."); "" when none.
func BindOf(submit string) string { return wire.SubmitAccount(submit) }

// restoredIdentity reports whether listed is the identity made as a Maui
// restart lists it: its required names (user, group) renamed as
// maui.Restored says, the plain account as made. Such an ACL admits no
// job of the user: it is altered all the same, this only says why.
func restoredIdentity(made, listed wire.Identity) bool {
	same := func(m, l string) bool { return m == l || maui.Restored(m, l) }
	return listed != made && same(made.User, listed.User) && same(made.Group, listed.Group) && made.Account == listed.Account
}

func identityString(id wire.Identity) string {
	s := "user=" + id.User
	if id.Group != "" {
		s += " group=" + id.Group
	}
	if id.Account != "" {
		s += " account=" + id.Account
	}
	return s
}

func nodesKey(ns []wire.NodeProcs) string {
	parts := make([]string, 0, len(ns))
	for _, n := range ns {
		parts = append(parts, n.Node+":"+itoa(n.Procs))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func ids(rs []wire.Reservation) string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
