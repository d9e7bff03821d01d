package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/slurm"
)

// partsCluster is a Slurm cluster that holds one grid reservation and
// some jobs, and records what the agent cancels.
type partsCluster struct {
	agent.SlurmClient
	resv      []slurm.Reservation
	jobs      []slurm.Job
	cancelled []string
}

func (c *partsCluster) Reservations(context.Context) ([]slurm.Reservation, error) { return c.resv, nil }
func (c *partsCluster) Jobs(context.Context) ([]slurm.Job, []string, error) {
	return c.jobs, []string{"squeue"}, nil
}
func (c *partsCluster) Cancel(_ context.Context, id string) ([]string, error) {
	c.cancelled = append(c.cancelled, id)
	return []string{"scancel", id}, nil
}
func (c *partsCluster) DeleteReservation(context.Context, string) (slurm.Answer, error) {
	return slurm.Answer{Code: slurm.Deleted}, nil
}
func (c *partsCluster) Location() *time.Location { return time.UTC }

// TestSlurmReleaseCancelsOnlyThePartsOwnJobs (issue 34): a release
// cancels, as the Slurm operator the agent is, the jobs in the job's
// reservation and the jobs named like its parts whose owner the
// reservation admits — not a job of another user that bears a part's
// name, nor part-named jobs once the reservation, and with it who may own
// them, is gone.
func TestSlurmReleaseCancelsOnlyThePartsOwnJobs(t *testing.T) {
	c := &partsCluster{
		resv: []slurm.Reservation{{Name: "la.g1", Users: []string{"alice"}}},
		jobs: []slurm.Job{
			{ID: 11, Name: "la.g1.0", User: "alice", State: "RUNNING", Reservation: "la.g1"},
			{ID: 12, Name: "la.g1.1", User: "alice", State: "PENDING"},   // held after its reservation was recreated
			{ID: 13, Name: "la.g1.0", User: "mallory", State: "PENDING"}, // only named like a part
			{ID: 14, Name: "other", User: "alice", State: "PENDING", Reservation: "la.g1"},
			{ID: 15, Name: "la.g2.0", User: "alice", State: "PENDING"}, // another grid job's part
			{ID: 16, Name: "la.g1.2", User: "alice", State: "COMPLETED", Reservation: "la.g1"},
		},
	}
	s := &agent.SlurmSite{Client: c, Site: "sl", Prefix: "la."}
	if _, err := s.Release(context.Background(), "g1"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"11", "12", "14"}; !slices.Equal(c.cancelled, want) {
		t.Errorf("cancelled %v, want %v (not mallory's 13, g2's 15 or the completed 16)", c.cancelled, want)
	}
	c.resv, c.cancelled = nil, nil // the reservation is gone
	if _, err := s.Release(context.Background(), "g1"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"11", "14"}; !slices.Equal(c.cancelled, want) {
		t.Errorf("with the reservation gone: cancelled %v, want %v (jobs that still name it only)", c.cancelled, want)
	}
}
