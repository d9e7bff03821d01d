package broker

import (
	"fmt"
	"sort"
	"strings"
)

// Forget removes ended jobs (finished, failed, cancelled, expired) that
// owe no release and last changed at or before before: the broker keeps
// them for its retention period only. What they spent stays counted
// against their user's and account's budgets. It returns how many jobs it
// forgot.
func (s *State) Forget(before int64) int {
	n := 0
	kept := s.order[:0]
	for _, j := range s.order {
		if j.Active() || len(j.PendingRelease) > 0 || len(j.PendingStop) > 0 || j.Updated > before {
			kept = append(kept, j)
			continue
		}
		s.forget(j)
		n++
	}
	clear(s.order[len(kept):])
	s.order = kept
	return n
}

// forget removes j from the jobs (not from s.order) and moves what it
// spent to its holders' spent.
func (s *State) forget(j *Job) {
	if c := spend(j); c != 0 {
		for _, h := range holdersOf(j) {
			old := s.spent[h]
			s.spent[h] = old + c
			s.ledger.spentChanged(h, old, s.spent[h])
		}
	}
	s.ledger.add(j, shareOf(j), -1)
	id := j.Req.ID
	if s.requests[j.RequestID] == id {
		delete(s.requests, j.RequestID)
	}
	delete(s.jobs, id)
}

// Snapshot is the whole grid queue at one point of the job stream: what a
// replay from that point starts from. Jobs carry every exported field of
// Job (so a field added there is kept without changes here) and their
// submission order.
type Snapshot struct {
	// Seq is the number of submissions so far (ids gN continue after it).
	Seq uint64 `json:"seq"`
	// Spent is what forgotten jobs spent, per budget holder ("account
	// NAME", "user NAME").
	Spent map[string]float64 `json:"spent,omitempty"`
	Jobs  []SnapshotJob      `json:"jobs"`
}

// SnapshotJob is one job of a snapshot with its submission order.
type SnapshotJob struct {
	Order uint64 `json:"order"`
	Job
}

// Snapshot copies the state (the jobs are shared, not copied: encode the
// snapshot before the state changes again).
func (s *State) Snapshot() Snapshot {
	sn := Snapshot{Seq: s.seq, Spent: map[string]float64{}, Jobs: make([]SnapshotJob, 0, len(s.jobs))}
	for h, v := range s.spent {
		sn.Spent[h.String()] = v
	}
	for _, j := range s.order {
		sn.Jobs = append(sn.Jobs, SnapshotJob{Order: j.seq, Job: *j})
	}
	return sn
}

// FromSnapshot rebuilds a state from a snapshot.
func FromSnapshot(sn Snapshot) (*State, error) {
	s := NewState()
	s.seq = sn.Seq
	for k, v := range sn.Spent {
		kind, name, ok := strings.Cut(k, " ")
		if !ok || (kind != "account" && kind != "user") {
			return nil, fmt.Errorf("snapshot: budget holder %q", k)
		}
		s.spent[holder{kind, name}] = v
		s.ledger.spentChanged(holder{kind, name}, 0, v)
	}
	sort.Slice(sn.Jobs, func(a, b int) bool { return sn.Jobs[a].Order < sn.Jobs[b].Order })
	for _, sj := range sn.Jobs {
		j := sj.Job
		if j.Req.ID == "" || s.jobs[j.Req.ID] != nil {
			return nil, fmt.Errorf("snapshot: job id %q empty or repeated", j.Req.ID)
		}
		j.seq = sj.Order
		s.seq = max(s.seq, j.seq)
		s.add(&j)
		if j.RequestID != "" {
			s.requests[j.RequestID] = j.Req.ID
		}
	}
	return s, nil
}
