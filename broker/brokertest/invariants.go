package brokertest

import (
	"fmt"
	"slices"

	"lookahead/wire"
)

// Invariants are what the fault suites (failover/, wan/) check on a
// settled grid: no submitted job lost and none listed twice; none half
// reserved (a reserved, dispatched or running job is held on every site
// of its plan, and no site holds a job the broker has elsewhere or not
// holding); the charges exact (a holding job is charged its allocation's
// cost, a finished, failed or cancelled one at most that, any other
// nothing). submitted maps request ids to job ids; held is, per
// site, the jobs it holds reservations of. It returns what is wrong, one
// line each (none: they hold).
func Invariants(st wire.StatusReply, submitted map[string]string, held map[string]map[string]bool) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	byID := map[string]wire.JobStatus{}
	for _, j := range st.Jobs {
		if _, dup := byID[j.Job.ID]; dup {
			fail("job %s listed twice", j.Job.ID)
		}
		byID[j.Job.ID] = j
	}
	if len(st.Jobs) != len(submitted) {
		fail("%d jobs for %d submissions", len(st.Jobs), len(submitted))
	}
	for req, id := range submitted {
		if _, ok := byID[id]; !ok {
			fail("job %s of request %s lost", id, req)
		}
	}
	for _, j := range st.Jobs {
		holds := holding(j.State)
		sites := PlanSites(j)
		for _, s := range sites {
			if !held[s][j.Job.ID] {
				fail("job %s %s but site %s holds no reservation of it (half reserved)", j.Job.ID, j.State, s)
			}
		}
		for s, jobs := range held {
			if jobs[j.Job.ID] && !slices.Contains(sites, s) {
				fail("site %s holds job %s, which the broker has %s on %v", s, j.Job.ID, j.State, sites)
			}
		}
		// a job that ran is charged its share when it ends, fails or is
		// cancelled (broker.Charge)
		ended := j.State == wire.JobFinished || j.State == wire.JobFailed || j.State == wire.JobCancelled
		switch {
		case holds && (j.Plan == nil || j.Cost != j.Plan.Cost):
			fail("job %s %s charged %v, its allocation costs %v", j.Job.ID, j.State, j.Cost, j.Plan)
		case ended && j.Plan != nil && (j.Cost < 0 || j.Cost > j.Plan.Cost):
			fail("job %s %s charged %v, outside [0, its allocation's %v]", j.Job.ID, j.State, j.Cost, j.Plan.Cost)
		case !holds && !(ended && j.Plan != nil) && j.Cost != 0:
			fail("job %s %s charged %v", j.Job.ID, j.State, j.Cost)
		}
	}
	return out
}

// PlanSites are the sites a reserved, dispatched or running job holds
// (none for a job in another state).
func PlanSites(j wire.JobStatus) []string {
	if j.Plan == nil || !holding(j.State) {
		return nil
	}
	return j.Plan.Sites()
}

func holding(state string) bool {
	return state == wire.JobReserved || state == wire.JobDispatched || state == wire.JobRunning
}

// SameStates reports whether two status replies list the same jobs in the
// same states after the same number of commit attempts: the queue did not
// move between them.
func SameStates(a, b wire.StatusReply) bool {
	if len(a.Jobs) != len(b.Jobs) {
		return false
	}
	for i := range a.Jobs {
		if a.Jobs[i].Job.ID != b.Jobs[i].Job.ID || a.Jobs[i].State != b.Jobs[i].State || a.Jobs[i].Attempts != b.Jobs[i].Attempts {
			return false
		}
	}
	return true
}
