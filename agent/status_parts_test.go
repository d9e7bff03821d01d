package agent

import "testing"

// The agent's status says whether it runs grid jobs' parts: with an
// executor (dispatch on) yes, else no — as its forecasts say.
func TestStatusSaysWhetherTheAgentRunsParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps Deps
		want bool
	}{
		{"dispatch off", Deps{Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}}, false},
		{"dispatch on", Deps{Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Executor: &capturedExec{t: t}}, true},
	} {
		a, err := New(Config{Site: "vm"}, tc.deps)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Status().RunsParts; got != tc.want {
			t.Errorf("%s: runs_parts %v, want %v", tc.name, got, tc.want)
		}
	}
}
