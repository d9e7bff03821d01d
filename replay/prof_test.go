package replay

import "testing"

func seed004() Scenario {
	return Scenario{
		Name: "seed004", Seed: 4,
		Sites: []SiteSpec{
			{Name: "c128a", Nodes: 1, PPN: 128, Price: 1}, {Name: "c128b", Nodes: 1, PPN: 128, Price: 1},
			{Name: "c256a", Nodes: 1, PPN: 256, Price: 2}, {Name: "c256b", Nodes: 1, PPN: 256, Price: 2},
			{Name: "c512a", Nodes: 1, PPN: 512, Price: 4}, {Name: "c512b", Nodes: 1, PPN: 512, Price: 4},
		},
		Grid: GridSpec{ExactRuntimes: true, MaxSites: 1, Payment: PaymentSpec{Min: 4, Max: 4}, Deadline: 20000,
			Synthetic: &SyntheticSpec{Jobs: 1000, RunMin: 10, RunMax: 300, Classes: []WidthClass{
				{Name: "small", Min: 1, Max: 128, Share: 0.4}, {Name: "medium", Min: 129, Max: 256, Share: 0.3}, {Name: "large", Min: 257, Max: 512, Share: 0.3}}}},
		Forecast: ForecastSpec{Period: 60, Horizon: 24 * 3600},
		Broker:   BrokerSpec{Cycle: 10, CommitLead: 24 * 3600},
		Policies: []string{NameMCT},
	}
}

func TestProfSeed004(t *testing.T) {
	rep, err := Study(seed004(), Inputs{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep.Results[0].Stats)
}
