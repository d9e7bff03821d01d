package replay

import (
	"strings"
	"testing"
)

// A scenario without a start runs on its traces' wall clock: the first job
// it replays is submitted when its trace's header says (UnixStartTime +
// its submit time); a scenario's own start is kept.
func TestScenarioOnTheTracesClock(t *testing.T) {
	jobs, st, err := ReadSWF(strings.NewReader("; UnixStartTime: 835823160\n" +
		"1 0 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n2 70 5 100 4 -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"))
	if err != nil || st.Origin != 835823160 {
		t.Fatalf("origin %d, err %v: want the header's UnixStartTime", st.Origin, err)
	}
	in := Inputs{Traces: map[string][]TraceJob{"ctc": jobs}, Origins: map[string]int64{"ctc": st.Origin}}
	sc := smallScenario()
	sc.Local.Trace, sc.Start = "ctc", 0
	if got := sc.OnClock(in).Start; got != 835823160 {
		t.Errorf("start %d, want the first job's time on the trace's clock 835823160", got)
	}
	sc.Local.Skip = 1
	if got := sc.OnClock(in).Start; got != 835823230 {
		t.Errorf("skipping a job: start %d, want 835823230", got)
	}
	sc.Start = 42
	if got := sc.OnClock(in).Start; got != 42 {
		t.Errorf("the scenario's start %d was not kept: %d", 42, got)
	}
}
