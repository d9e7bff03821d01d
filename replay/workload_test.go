package replay

import (
	"reflect"
	"testing"
)

func TestWorkloadIsDeterministicAndSplitsEveryJob(t *testing.T) {
	in := Inputs{Traces: map[string][]TraceJob{"t": randomTrace(5, 300, 40, 3000)}}
	sc := smallScenario()
	sc.Local.MaxWidth = 12
	sc = sc.WithDefaults()
	a, err := BuildWorkload(sc, in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BuildWorkload(sc, in)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different workloads")
	}
	n := len(a.Grid) + a.Dropped
	for i, jobs := range a.Local {
		n += len(jobs)
		for _, j := range jobs {
			if j.Procs > 12 || j.Procs > sc.Sites[i].Nodes*sc.Sites[i].PPN {
				t.Fatalf("job %s of %d procs on site %s", j.ID, j.Procs, sc.Sites[i].Name)
			}
		}
	}
	if n != 300 {
		t.Fatalf("%d jobs accounted for, want 300", n)
	}
	if len(a.Grid) < 60 || len(a.Grid) > 120 {
		t.Fatalf("%d grid jobs of 300 at share 0.3", len(a.Grid))
	}
	if a.Local[0][0].Submit < sc.Start {
		t.Fatal("submit times not shifted to the start")
	}
}

func TestSyntheticClassesAreExact(t *testing.T) {
	sc := Scenario{Seed: 9, Sites: []SiteSpec{{Name: "a", Nodes: 1, PPN: 512}}, Policies: []string{NameMCT},
		Grid: GridSpec{ExactRuntimes: true, Synthetic: &SyntheticSpec{Jobs: 1000, RunMin: 10, RunMax: 300, Classes: []WidthClass{
			{Min: 1, Max: 128, Share: 0.4}, {Min: 129, Max: 256, Share: 0.3}, {Min: 257, Max: 512, Share: 0.3}}}}}
	w, err := BuildWorkload(sc.WithDefaults(), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	counts := [3]int{}
	for _, j := range w.Grid {
		switch p := j.Req.Procs; {
		case p <= 128:
			counts[0]++
		case p <= 256:
			counts[1]++
		default:
			counts[2]++
		}
		if j.Run < 10 || j.Run > 300 || j.Req.Walltime != j.Run {
			t.Fatalf("job %s: run %d walltime %d", j.Req.ID, j.Run, j.Req.Walltime)
		}
	}
	if counts != [3]int{400, 300, 300} {
		t.Fatalf("class counts %v, want [400 300 300]", counts)
	}
}
