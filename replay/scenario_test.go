package replay

import (
	"errors"
	"strings"
	"testing"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Scenario)
		field string
	}{
		{"no sites", func(s *Scenario) { s.Sites = nil }, "sites"},
		{"duplicate site", func(s *Scenario) { s.Sites[1].Name = "a" }, "sites[1].name"},
		{"zero nodes", func(s *Scenario) { s.Sites[0].Nodes = 0 }, "sites[0].nodes"},
		{"bad local policy", func(s *Scenario) { s.Sites[2].Policy = "sjf" }, "sites[2].policy"},
		{"share above 1", func(s *Scenario) { s.Grid.Share = 1.5 }, "grid.share"},
		{"payment upside down", func(s *Scenario) { s.Grid.Payment = PaymentSpec{Min: 3, Max: 1} }, "grid.payment"},
		{"unknown strategy", func(s *Scenario) { s.Policies = []string{"random"} }, "policies[0]"},
		{"settings not closed", func(s *Scenario) { s.Policies = []string{NameLookahead, "lookahead[tolerance=0.1"} }, "policies[1]: \"lookahead[tolerance=0.1\": want a strategy name, or one with settings in brackets"},
		{"factor below 1", func(s *Scenario) { s.Broker.MultiSiteFactor = 0.5 }, "broker.multi_site_factor"},
		{"cheap without deadline", func(s *Scenario) { s.Policies = []string{NameCheap} }, "grid.deadline"},
		{"sweep h count", func(s *Scenario) { s.Sweep.Heterogeneity = [][]float64{{1, 2}} }, "sweep.heterogeneity[0]"},
		{"width rule", func(s *Scenario) { s.Local.WidthRule = "squash" }, "local.width_rule"},
		{"queue order", func(s *Scenario) { s.Broker.Order = "random" }, "broker.order"},
		{"tolerance", func(s *Scenario) { t := -1.0; s.Broker.Tolerance = &t }, "tolerance"},
		{"payment sweep upside down", func(s *Scenario) { s.Sweep.Payment = []PaymentSpec{{Min: 2, Max: 1}} }, "sweep.payment[0]"},
		{"mix shares", func(s *Scenario) {
			s.Grid.Synthetic = &SyntheticSpec{Jobs: 1, RunMin: 1, RunMax: 2, Classes: []WidthClass{{Min: 1, Max: 2, Share: 0.5}}}
		}, "grid.synthetic.classes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := smallScenario()
			sc.Policies = []string{NameLookahead}
			c.edit(&sc)
			err := sc.WithDefaults().Validate()
			if err == nil || !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("got %v, want an error naming %s", err, c.field)
			}
		})
	}
	ok := smallScenario()
	ok.Policies = []string{NameLookahead}
	if err := ok.WithDefaults().Validate(); err != nil {
		t.Fatalf("valid scenario refused: %v", err)
	}
}

func TestPointsExpandEveryCombination(t *testing.T) {
	sc := smallScenario()
	sc.Sweep = SweepSpec{MultiSiteFactor: []float64{1, 1.5}, SitePolicy: []string{"easy", "conservative"},
		Heterogeneity: [][]float64{{1, 1, 1}, {1.4, 1, 0.6}}}
	pts := sc.Points()
	if len(pts) != 8 {
		t.Fatalf("%d points, want 8", len(pts))
	}
	seen := map[string]bool{}
	for _, p := range pts {
		seen[p.Label()] = true
	}
	if len(seen) != 8 {
		t.Fatalf("labels not distinct: %v", seen)
	}
	at := sc.At(pts[len(pts)-1])
	if at.Broker.MultiSiteFactor != 1.5 || at.Sites[0].Policy != "conservative" || at.Sites[2].Speed != 1/0.6 {
		t.Fatalf("last point not applied: %+v %+v", at.Broker, at.Sites)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]int64{"600": 600, "10m": 600, "2d": 172800, "1h30m": 5400} {
		var d Duration
		if err := d.UnmarshalText([]byte(in)); err != nil || d.Seconds() != want {
			t.Errorf("%q: got %d, %v; want %d", in, d, err, want)
		}
	}
	for _, in := range []string{"ten", "1.5s", "3w"} {
		var d Duration
		if err := d.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%q accepted as %d", in, d)
		}
	}
}

// TestFCFSOrder: broker.order fcfs (the default) plans by submit time,
// then id, whatever the jobs pay; priority puts the best payer first.
func TestFCFSOrder(t *testing.T) {
	jobs := []forecast.JobRequest{{ID: "b", Submitted: 5, MaxPrice: 1}, {ID: "c", Submitted: 9, MaxPrice: 3}, {ID: "a", Submitted: 5, MaxPrice: 2}}
	for _, sc := range []Scenario{{Broker: BrokerSpec{Order: OrderFCFS}}, {}} {
		got := queueOrder(coallocOptions(sc))(jobs)
		if got[0].ID != "a" || got[1].ID != "b" || got[2].ID != "c" || jobs[0].ID != "b" {
			t.Fatalf("order %q: %v (input %v)", sc.Broker.Order, got, jobs)
		}
	}
	if p := queueOrder(coallocOptions(Scenario{Broker: BrokerSpec{Order: OrderPriority}}))(jobs); p[0].ID != "c" {
		t.Fatalf("priority %v", p)
	}
	// aging: 1 s per credit moves nothing across 4 s of submit time; 3 s
	// per credit puts c (3 credits, 4 s later) before b (1 credit)
	for rate, want := range map[Duration]string{1: "abc", 3: "acb"} {
		p := queueOrder(coallocOptions(Scenario{Broker: BrokerSpec{Order: OrderAging, Aging: rate}}))(jobs)
		if got := p[0].ID + p[1].ID + p[2].ID; got != want {
			t.Errorf("aging %v s per credit: %s, want %s", rate, got, want)
		}
	}
}

// TestPaymentSweep: each payment point sets what every grid job pays, and
// labels the point.
func TestPaymentSweep(t *testing.T) {
	sc := seed002(10)
	sc.Sweep.Payment = []PaymentSpec{{Min: 1, Max: 1}, {Min: 2, Max: 3}}
	pts := sc.Points()
	if len(pts) != 2 || pts[1].Label() != "pay=2-3" {
		t.Fatalf("points %+v", pts)
	}
	if at := sc.At(pts[1]); at.Grid.Payment != (PaymentSpec{Min: 2, Max: 3}) {
		t.Fatalf("payment %+v", at.Grid.Payment)
	}
}

// A policy may carry broker settings of its own: they reach the run (the
// order and free tolerance here), bad ones are refused naming the policy.
func TestPolicySettings(t *testing.T) {
	sc := smallScenario()
	sc.Policies = []string{NameLookahead, "lookahead[order=fcfs, free_tolerance=0.5, free_window=since-submit, commit_lead=1h]"}
	if err := sc.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	v, err := sc.forPolicy(sc.Policies[1])
	if err != nil || v.Broker.Order != OrderFCFS || *v.Broker.FreeTolerance != 0.5 || sc.Broker.FreeTolerance != nil ||
		coallocOptions(v).FreeWindow != coalloc.FreeWindowSinceSubmit || coallocOptions(sc).FreeWindow != "" ||
		v.Broker.CommitLead.Seconds() != 3600 || sc.Broker.CommitLead == v.Broker.CommitLead {
		t.Fatalf("settings %+v, %v (scenario's %+v)", v.Broker, err, sc.Broker)
	}
	sc.Policies = []string{"lookahead[split_backlog=1.5]"}
	if v, err := sc.forPolicy(sc.Policies[0]); err != nil || coallocOptions(v).SplitBacklog != 1.5 || coallocOptions(sc).SplitBacklog != 0 {
		t.Fatalf("split backlog: %+v %v", coallocOptions(v), err)
	}
	sc.Policies = []string{"lookahead[order=area, aging=60s, hold_free=true]"}
	if err := sc.WithDefaults().Validate(); err != nil {
		t.Fatalf("the area order with aging: %v", err)
	}
	if v, err := sc.forPolicy(sc.Policies[0]); err != nil || coallocOptions(v).Order != coalloc.OrderArea || coallocOptions(v).Aging != 60 || !v.Broker.HoldFree {
		t.Fatalf("area order: %+v %v", coallocOptions(v), err)
	}
	for _, p := range []string{"lookahead[bogus=1]", "lookahead[order=sometimes]", "lookahead[free_tolerance=x]", "lookahead[order]", "lookahead[free_window=never]", "lookahead[commit_lead=soon]", "lookahead[split_backlog=-1]"} {
		sc.Policies = []string{p}
		if err := sc.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "policies[0]") {
			t.Errorf("%s: %v, want refused naming policies[0]", p, err)
		}
	}
}
