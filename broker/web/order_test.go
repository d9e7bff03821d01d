package web_test

import (
	"context"
	"testing"

	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/broker/web"
	"lookahead/wire"
)

// TestJobsSayTheirPlaceInTheQueueOrder: /api/jobs names the order the
// broker plans in, says what it plans first, and gives each waiting job
// its place in the last cycle's queue, the place `lookahead status` gives
// it. Two jobs that fit nowhere (so they stay waiting), the cheaper one
// submitted first: first in fcfs order, second in price order. A job
// submitted after the cycle has no place yet.
func TestJobsSayTheirPlaceInTheQueueOrder(t *testing.T) {
	for _, order := range []string{coalloc.OrderFCFS, coalloc.OrderPrice} {
		t.Run(order, func(t *testing.T) {
			g := newGrid(t)
			g.order = order
			g.startAgent("alpha", 1)
			g.startBroker()
			g.waitSites(1)
			cheap := g.submit("r-cheap", 8, 3600, 0.01) // no slot is that cheap: both wait
			dear := g.submit("r-dear", 8, 3600, 0.02)
			if err := g.b.Cycle(context.Background()); err != nil {
				t.Fatal(err)
			}
			late := g.submit("r-late", 8, 3600, 0.03)
			first, second := cheap, dear
			if order == coalloc.OrderPrice {
				first, second = dear, cheap
			}
			var got web.JobsView
			getJSON(t, g.url+"api/jobs", &got)
			if got.Order != order || got.OrderMeaning != client.OrderMeaning(order) {
				t.Errorf("the page's order %q (%q), want %q (%q)", got.Order, got.OrderMeaning, order, client.OrderMeaning(order))
			}
			want := map[string]*wire.QueuePlace{first: {Position: 1, Of: 2, Order: order}, second: {Position: 2, Of: 2, Order: order}, late: nil}
			if len(got.Jobs) != len(want) {
				t.Fatalf("%d jobs, want %d: %+v", len(got.Jobs), len(want), got.Jobs)
			}
			for _, j := range got.Jobs {
				status := g.b.Status(wire.StatusRequest{Job: j.ID}).Jobs[0].Queue
				if w := want[j.ID]; !samePlace(j.Queue, w) || !samePlace(j.Queue, status) {
					t.Errorf("%s (%s): queue %+v on the page, %+v in status, want %+v", j.ID, j.State, j.Queue, status, w)
				}
			}
		})
	}
}

func samePlace(a, b *wire.QueuePlace) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
