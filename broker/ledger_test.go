package broker

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"lookahead/wire"
)

// exactRounded is the exact sum of xs rounded once to the nearest
// float64 (ties to even), by arbitrary precision.
func exactRounded(xs []float64) float64 {
	sum := new(big.Float).SetPrec(4096)
	for _, x := range xs {
		sum.Add(sum, new(big.Float).SetPrec(4096).SetFloat64(x))
	}
	f, _ := sum.Float64()
	return f
}

// The exact sum is the exact sum, rounded once, after any sequence of
// adds and take-backs: no error accumulates (a plain running total of
// these drifts by many ulps, and loses small values next to big ones).
func TestExactSumAgainstBigFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() float64 {
		switch rng.IntN(4) {
		case 0:
			return float64(rng.IntN(1000)) / 3 // many ties and repeats
		case 1:
			return rng.Float64() * math.Pow(10, float64(rng.IntN(40)-10))
		case 2:
			return 1e22 * rng.Float64()
		}
		return rng.NormFloat64() * 1e-5
	}
	drift := 0
	for round := range 300 {
		var s exactSum
		var held []float64
		naive := 0.0
		for range rng.IntN(200) + 1 {
			if len(held) > 0 && rng.IntN(3) == 0 {
				k := rng.IntN(len(held))
				s.add(-held[k])
				naive -= held[k]
				held = append(held[:k], held[k+1:]...)
			} else {
				x := draw()
				s.add(x)
				naive += x
				held = append(held, x)
			}
			if got, want := s.value(), exactRounded(held); got != want {
				t.Fatalf("round %d: sum of %d values %v, exactly %v", round, len(held), got, want)
			}
		}
		if naive != exactRounded(held) {
			drift++
		}
	}
	if drift == 0 {
		t.Fatal("no round where a running total drifts: the test does not test exactness")
	}
}

// walkLedger is what the ledger must equal: the counts and sums of a walk
// over every job, as admission did before the ledger.
func walkLedger(s *State) map[holder][2]float64 {
	spends := map[holder][]float64{}
	active := map[holder]int{}
	for h, v := range s.spent {
		spends[h] = append(spends[h], v)
	}
	for _, j := range s.jobs {
		for _, h := range holdersOf(j) {
			spends[h] = append(spends[h], spend(j))
			if j.Active() {
				active[h]++
			}
		}
	}
	out := map[holder][2]float64{}
	for h, xs := range spends {
		out[h] = [2]float64{float64(active[h]), exactRounded(xs)}
	}
	return out
}

func ledgerValues(s *State) map[holder][2]float64 {
	out := map[holder][2]float64{}
	for h := range s.ledger {
		if a, u := s.ledger.active(h), s.ledger.used(h); a != 0 || u != 0 {
			out[h] = [2]float64{float64(a), u}
		}
	}
	return out
}

func checkLedger(t *testing.T, s *State, step string) {
	t.Helper()
	want := walkLedger(s)
	for h, v := range want {
		if v == ([2]float64{}) {
			delete(want, h)
		}
	}
	if got := ledgerValues(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: ledger (active, used) %v, a walk over the jobs %v", step, got, want)
	}
	if len(s.order) != len(s.jobs) {
		t.Fatalf("%s: %d jobs in order, %d held", step, len(s.order), len(s.jobs))
	}
	for i := 1; i < len(s.order); i++ {
		if s.order[i-1].seq >= s.order[i].seq {
			t.Fatalf("%s: order not by submission at %d", step, i)
		}
	}
}

// sameState compares two states, their ledgers by what they answer (two
// exact sums of the same value may hold different partials).
func sameState(a, b *State) bool {
	if !reflect.DeepEqual(ledgerValues(a), ledgerValues(b)) {
		return false
	}
	x, y := *a, *b
	x.ledger, y.ledger = nil, nil
	return reflect.DeepEqual(x, y)
}

// randomEvent draws an event for one of the state's jobs (or a new one):
// most apply, some are refused (and must change nothing).
func randomEvent(rng *rand.Rand, s *State, now int64) Event {
	if len(s.order) == 0 || rng.IntN(4) == 0 {
		r := req(fmt.Sprintf("g%d", s.seq+1), 1+rng.IntN(64), int64(60+rng.IntN(7200)), rng.Float64()*3)
		r.User, r.Account = []string{"alice", "bob", ""}[rng.IntN(3)], []string{"p1", "p2", ""}[rng.IntN(3)]
		return submitted(r, now)
	}
	j := s.order[rng.IntN(len(s.order))]
	id := j.Req.ID
	cost := float64(rng.IntN(1000)) / 7
	switch rng.IntN(7) {
	case 0:
		return Event{Kind: EvIntent, Time: now, Job: id, Alloc: twoSiteAlloc(id)}
	case 1:
		return Event{Kind: EvOutcome, Time: now, Job: id, OK: rng.IntN(3) > 0, Cost: cost}
	case 2:
		st := []string{SiteStarted, SiteFinished, SiteFailed}[rng.IntN(3)]
		return Event{Kind: EvSite, Time: now, Job: id, Site: []string{"a", "b"}[rng.IntN(2)], State: st}
	case 3:
		return Event{Kind: EvCancelled, Time: now, Job: id, Cost: cost}
	case 4:
		return Event{Kind: EvExpired, Time: now, Job: id}
	case 5:
		return Event{Kind: EvReleased, Time: now, Job: id, Site: "a"}
	}
	return Event{Kind: EvIntent, Time: now, Job: id} // refused: no allocation
}

// The ledger equals a walk over the jobs after every event, applied or
// refused, every Forget and every snapshot round trip.
func TestLedgerMatchesAWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		s := NewState()
		applied := 0
		for step := range 400 {
			now := int64(1000 + step)
			if s.Apply(randomEvent(rng, s, now)) == nil {
				applied++
			}
			checkLedger(t, s, fmt.Sprintf("round %d step %d", round, step))
			switch rng.IntN(40) {
			case 0:
				s.Forget(now - int64(rng.IntN(100)))
				checkLedger(t, s, fmt.Sprintf("round %d step %d forget", round, step))
			case 1:
				r, err := FromSnapshot(s.Snapshot())
				if err != nil {
					t.Fatal(err)
				}
				checkLedger(t, r, fmt.Sprintf("round %d step %d restored", round, step))
				if !sameState(r, s) {
					t.Fatalf("round %d step %d: the restored state differs", round, step)
				}
				s = r
			}
		}
		if applied < 100 {
			t.Fatalf("round %d: only %d events applied", round, applied)
		}
	}
}

// Admission reads the ledger: the bound on active jobs and the budget
// hold at their limits as jobs come and end.
func TestAdmissionBoundsFromTheLedger(t *testing.T) {
	s := NewState()
	limit := 3 * WorstCost(req("x", 8, 3600, 2))
	p := Policy{MaxActivePerUser: 2, Budgets: Budgets{Users: map[string]float64{"alice": limit}}}
	submit := func(id string) (string, string) {
		r := req(id, 8, 3600, 2)
		r.Account = ""
		e, reply := Admit(s, p, "alice", wire.SubmitRequest{Type: wire.TypeSubmit, Job: r}, 10)
		if e.Kind != "" {
			mustApply(t, s, e)
		}
		return reply.Code, reply.Message
	}
	for _, id := range []string{"g1", "g2"} {
		if code, msg := submit(id); code != wire.CodeOK {
			t.Fatalf("%s: %s %s", id, code, msg)
		}
	}
	if code, _ := submit("g3"); code != wire.CodeQueueFull {
		t.Fatalf("third active job: %s, want %s", code, wire.CodeQueueFull)
	}
	mustApply(t, s, Event{Kind: EvCancelled, Time: 11, Job: "g1"}) // refunded: frees a place and its budget
	if code, msg := submit("g3"); code != wire.CodeOK {
		t.Fatalf("after a cancel: %s %s", code, msg)
	}
	mustApply(t, s, Event{Kind: EvIntent, Time: 12, Job: "g2", Alloc: twoSiteAlloc("g2")})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 13, Job: "g2", OK: true, Cost: limit * 2 / 3})
	for _, site := range []string{"a", "b"} {
		mustApply(t, s, Event{Kind: EvSite, Time: 14, Job: "g2", Site: site, State: SiteFinished})
	}
	// alice: g2 spent 2/3 of the limit, g3 holds a third: nothing left
	if code, _ := submit("g4"); code != wire.CodeOverBudget {
		t.Fatalf("over budget: %s, want %s", code, wire.CodeOverBudget)
	}
	if used := s.Used("alice", true); used != limit {
		t.Fatalf("alice used %v, want %v", used, limit)
	}
}
