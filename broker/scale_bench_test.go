package broker

import (
	"fmt"
	"sort"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// The queue of issue 39's scale: 100,000 waiting jobs of 100 users in 20
// accounts, every user and account under a budget and a bound on active
// jobs.
const benchQueue = 100_000

func benchState(b *testing.B) (*State, Policy) {
	b.Helper()
	s := NewState()
	p := Policy{MaxActivePerUser: benchQueue, MaxActivePerAccount: benchQueue,
		Budgets: Budgets{Default: new(float64)}}
	*p.Budgets.Default = 1e18
	for i := range benchQueue {
		r := forecast.JobRequest{ID: fmt.Sprintf("g%d", i+1), Procs: 8 << (i % 7), Walltime: 3600 * int64(1+i%8),
			MaxPrice: 1 + float64(i%4)/2, User: fmt.Sprintf("u%d", i%100), Account: fmt.Sprintf("a%d", i%20)}
		if err := s.Apply(Event{Kind: EvSubmitted, Time: int64(i), Job: r.ID, Request: &r}); err != nil {
			b.Fatal(err)
		}
	}
	return s, p
}

// walkActive and walkUsed are admission's counts as they were before the
// ledger: a walk over every job (the baseline of BenchmarkAdmitAt100k).
func walkActive(s *State, job forecast.JobRequest) (users, accounts int) {
	for _, j := range s.jobs {
		if !j.Active() {
			continue
		}
		if job.User != "" && j.Req.User == job.User {
			users++
		}
		if job.Account != "" && j.Req.Account == job.Account {
			accounts++
		}
	}
	return users, accounts
}

func walkUsed(s *State, h holder) float64 {
	total := s.spent[h]
	for _, j := range s.jobs {
		if (h.kind == "account" && j.Req.Account == h.name) || (h.kind == "user" && j.Req.User == h.name) {
			total += spend(j)
		}
	}
	return total
}

// BenchmarkAdmitAt100k is one submission's decision with 100,000 jobs
// queued: the ledger's lookups against the walks they replaced.
func BenchmarkAdmitAt100k(b *testing.B) {
	s, p := benchState(b)
	r := forecast.JobRequest{Procs: 64, Walltime: 7200, MaxPrice: 2, User: "u7", Account: "a7"}
	req := wire.SubmitRequest{Type: wire.TypeSubmit, Job: r}
	b.Run("algo=ledger", func(b *testing.B) {
		for b.Loop() {
			if _, reply := Admit(s, p, "", req, 1); reply.Code != wire.CodeOK {
				b.Fatal(reply.Message)
			}
		}
	})
	b.Run("algo=walk", func(b *testing.B) {
		for b.Loop() {
			if _, reply := Admit(s, p, "", req, 1); reply.Code != wire.CodeOK {
				b.Fatal(reply.Message)
			}
			walkActive(s, r)
			walkUsed(s, holder{"user", r.User})
			walkUsed(s, holder{"account", r.Account})
		}
	})
}

// BenchmarkStatusPagesAt100k is every page of the status of 100,000
// jobs: the pages found by a binary search in the submission order
// against the sort of the whole queue per page they replaced.
func BenchmarkStatusPagesAt100k(b *testing.B) {
	s, p := benchState(b)
	all := Viewer{All: true}
	pages := func(b *testing.B, resort bool) {
		n := 0
		for b.Loop() {
			req := wire.StatusRequest{Type: wire.TypeStatus}
			for n = 1; ; n++ {
				if resort { // the cost of State.Jobs before: a sort of the queue per page
					out := make([]*Job, 0, len(s.jobs))
					for _, j := range s.jobs {
						out = append(out, j)
					}
					sort.Slice(out, func(a, b int) bool { return out[a].seq < out[b].seq })
				}
				reply := s.Status(p, all, req, nil, Page{Bytes: 1 << 20}, 1)
				if reply.Next == 0 {
					break
				}
				req.After = reply.Next
			}
		}
		b.ReportMetric(float64(n), "pages")
	}
	b.Run("algo=cursor", func(b *testing.B) { pages(b, false) })
	b.Run("algo=sort-per-page", func(b *testing.B) { pages(b, true) })
}
