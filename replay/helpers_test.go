package replay

import (
	"compress/gzip"
	"os"
	"testing"

	"lookahead/internal/testfile"
)

// ctcSlice reads the committed CTC slice, from any working directory (a
// test binary run outside the package directory).
func ctcSlice(t testing.TB) []TraceJob {
	path, err := testfile.Path("ctc-sp2-first5000.swf.gz")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := ReadSWF(gz)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func seed002(jobs int) Scenario {
	return Scenario{
		Name: "seed002", Seed: 2,
		Sites: []SiteSpec{{Name: "beijing", Nodes: 128}, {Name: "shanghai", Nodes: 64}, {Name: "harbin", Nodes: 32}},
		Local: LocalSpec{Trace: "ctc", Jobs: jobs, MaxWidth: 32, TimeScale: 1.8},
		Grid: GridSpec{Share: 0.5, MaxWidth: 32, Redraw: &RedrawSpec{Share: 0.9, Min: 11, Max: 32},
			Payment: PaymentSpec{Min: 1, Max: 3}},
		Forecast:   ForecastSpec{Period: 300, Horizon: 48 * 3600},
		Broker:     BrokerSpec{Cycle: 60, CommitLead: 300},
		Policies:   []string{NameLookahead},
		NoBaseline: true,
	}
}

// Study runs one scenario (Studies of one).
func Study(sc Scenario, in Inputs, opts Options) (Report, error) {
	reps, err := Studies([]Scenario{sc}, in, opts)
	if err != nil {
		return Report{}, err
	}
	return reps[0], nil
}
