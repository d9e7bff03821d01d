package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/wire"
)

// bigPlan is a plan of n allocations, some placed on two sites, some
// not placed with a why.
func bigPlan(n int) wire.Plan {
	p := wire.Plan{Type: wire.TypePlan, Cycle: 7, Time: t0, Sites: []string{"alpha", "beta"}, Commit: []string{"g1"}, Micros: 12}
	for i := range n {
		a := forecast.Allocation{Job: fmt.Sprintf("g%d", i+1)}
		if i%3 == 2 {
			a.Error, a.Why = "no fit", strings.Repeat("short of processors; ", 1+i%5)
		} else {
			a.Start, a.End, a.Cost = t0+int64(i), t0+int64(i)+3600, float64(i)/7
			a.Parts = []forecast.Part{{Site: "alpha", Node: fmt.Sprintf("alpha%03d", i%100), Procs: 8}}
			if i%2 == 0 {
				a.Parts = append(a.Parts, forecast.Part{Site: "beta", Node: "beta01", Procs: 4})
			}
		}
		p.Allocations = append(p.Allocations, a)
	}
	return p
}

// The pages of a plan, read one after the other from Next, are the plan:
// each fits in the budget, carries the envelope and Total, and the last
// says there is no more.
func TestPlanPagesAreThePlan(t *testing.T) {
	p := bigPlan(2000)
	whole, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 16 << 10
	var got []forecast.Allocation
	pages, from := 0, 0
	for {
		data, err := planPage(p, from, budget)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > budget {
			t.Fatalf("page %d: %d bytes, budget %d", pages, len(data), budget)
		}
		var page wire.Plan
		if err := wire.DecodeStrict(data, &page); err != nil {
			t.Fatal(err)
		}
		if page.Cycle != p.Cycle || page.Total != len(p.Allocations) || !reflect.DeepEqual(page.Sites, p.Sites) || len(page.Allocations) == 0 {
			t.Fatalf("page %d: cycle %d total %d sites %v, %d allocations", pages, page.Cycle, page.Total, page.Sites, len(page.Allocations))
		}
		got = append(got, page.Allocations...)
		pages++
		if page.Next == 0 {
			break
		}
		if page.Next != from+len(page.Allocations) {
			t.Fatalf("page %d from %d with %d allocations says next %d", pages, from, len(page.Allocations), page.Next)
		}
		from = page.Next
	}
	if pages < len(whole)/budget {
		t.Fatalf("%d pages of %d bytes for a plan of %d bytes", pages, budget, len(whole))
	}
	var want wire.Plan
	if err := json.Unmarshal(whole, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Allocations) {
		t.Fatalf("the pages' %d allocations differ from the plan's %d", len(got), len(want.Allocations))
	}
	// an allocation bigger than the budget still makes a page (alone)
	huge := bigPlan(3)
	huge.Allocations[1].Why = strings.Repeat("x", budget)
	for from, want := range []int{1, 2, 0} {
		var page wire.Plan
		data, err := planPage(huge, from, budget)
		if err != nil || json.Unmarshal(data, &page) != nil || page.Next != want || len(page.Allocations) != 1 {
			t.Fatalf("from %d: next %d, %d allocations (%v), want next %d", from, page.Next, len(page.Allocations), err, want)
		}
	}
}

// Issue 39: a plan bigger than the server's max_payload is published as
// its first page (it was not published at all: the publish was refused)
// and `lookahead plan`'s client reads it whole, page by page, from a
// real server. The server's max_payload is lowered to 64 KiB so that a
// queue of 1,000 jobs exceeds it, as 100,000 jobs exceed the default
// 1 MiB.
func TestPlanBiggerThanMaxPayload(t *testing.T) {
	e := newEnvMaxPayload(t, 64<<10)
	for _, site := range []string{"alpha", "beta"} { // free from tomorrow: nothing is due, nothing commits
		f := e.siteForecast(site, 1, 8, 8)
		f.Horizon += 86400
		for i := range f.Slots {
			f.Slots[i].Start += 86400
			f.Slots[i].End += 86400
		}
		e.putForecast(site, f)
	}
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	const n = 1000
	for i := range n {
		if rep := submit(t, r.b, fmt.Sprintf("k%d", i), job(8, 600, 2)); rep.Code != wire.CodeOK {
			t.Fatalf("submit %d: %+v", i, rep)
		}
	}
	sub, err := e.nc.SubscribeSync(wire.PlanSubject)
	if err != nil {
		t.Fatal(err)
	}
	e.nc.Flush()
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	whole, err := json.Marshal(r.b.Plan())
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) <= 64<<10 {
		t.Fatalf("the plan is %d bytes: not over max_payload, the test tests nothing", len(whole))
	}
	msg, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no plan published: %v", err)
	}
	var first wire.Plan
	if err := json.Unmarshal(msg.Data, &first); err != nil {
		t.Fatal(err)
	}
	if first.Cycle != 1 || first.Total != n || len(first.Allocations) == 0 || first.Next != len(first.Allocations) {
		t.Fatalf("published: cycle %d total %d next %d, %d allocations", first.Cycle, first.Total, first.Next, len(first.Allocations))
	}
	got, err := client.New(connect(t, e.srv), "").Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want wire.Plan
	if err := json.Unmarshal(whole, &want); err != nil {
		t.Fatal(err)
	}
	if got.Cycle != 1 || got.Total != n || got.Next != 0 || !reflect.DeepEqual(got.Allocations, want.Allocations) {
		t.Fatalf("read: cycle %d total %d next %d, %d allocations, want the plan's %d", got.Cycle, got.Total, got.Next, len(got.Allocations), len(want.Allocations))
	}
}
