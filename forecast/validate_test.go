package forecast

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDecodeForecastRejects(t *testing.T) {
	base := `{"version":1,"site":"alpha","seq":1,"generated":100,"horizon":1000,
 "nodes":[{"name":"n1","procs":8,"speed":1,"mem_mb":1000}],
 "slots":[%s]}`
	cases := map[string]struct{ slot, want string }{
		"ok":            {`{"node":"n1","procs":8,"start":100,"end":200,"price":1}`, ""},
		"unknown node":  {`{"node":"n2","procs":8,"start":100,"end":200,"price":1}`, "slots[0].node"},
		"end<=start":    {`{"node":"n1","procs":8,"start":200,"end":200,"price":1}`, "slots[0].end"},
		"negative proc": {`{"node":"n1","procs":-1,"start":100,"end":200,"price":1}`, "slots[0].procs"},
		"over capacity": {`{"node":"n1","procs":9,"start":100,"end":200,"price":1}`, "capacity"},
		"neg price":     {`{"node":"n1","procs":1,"start":100,"end":200,"price":-1}`, "slots[0].price"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(base, "%s", c.slot, 1)
			_, err := DecodeForecast(strings.NewReader(in))
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want one naming %q and wrapping ErrInvalid", err, c.want)
			}
		})
	}
}

func TestDecodeForecastVersionAndDuplicates(t *testing.T) {
	for name, in := range map[string]string{
		"version 2": `{"version":2,"site":"a","nodes":[],"slots":[]}`,
		"dup node":  `{"version":1,"site":"a","nodes":[{"name":"n","procs":1,"speed":1},{"name":"n","procs":1,"speed":1}],"slots":[]}`,
		"bad site":  `{"version":1,"site":"a;b","nodes":[],"slots":[]}`,
		"unknown":   `{"version":1,"site":"a","nodes":[],"slots":[],"extra":1}`,
	} {
		if _, err := DecodeForecast(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestErrInvalidSaysItIsBadInput: the CLIs (internal/cli, which does not
// import this package) exit 2 for an error whose chain says BadInput.
func TestErrInvalidSaysItIsBadInput(t *testing.T) {
	var b interface{ BadInput() bool }
	err := fmt.Errorf("forecast x.json: %w", invalid("slots[0].end: %d", 5))
	if !errors.As(err, &b) || !b.BadInput() || !errors.Is(err, ErrInvalid) {
		t.Fatalf("%v: not bad input", err)
	}
}

// TestCheckCapacity: slots of one node that overlap and together offer
// more than the node's processors are refused, as one oversized slot is;
// slots that only touch, or that fit together, pass; a forecast whose
// slots are not grouped by node is checked the same.
func TestCheckCapacity(t *testing.T) {
	sl := func(node string, procs int, start, end int64) Slot {
		return Slot{Node: node, Procs: procs, Start: start, End: end, Price: 1}
	}
	for _, tc := range []struct {
		name  string
		slots []Slot
		want  string
	}{
		{"fit together", []Slot{sl("n1", 4, 0, 100), sl("n1", 4, 50, 150)}, ""},
		{"touch", []Slot{sl("n1", 8, 0, 100), sl("n1", 8, 100, 200)}, ""},
		{"overlap over", []Slot{sl("n1", 8, 0, 100), sl("n1", 1, 99, 200)}, `slots[1]: with the slots it overlaps at 99, node "n1" offers 9 processors, it has 8`},
		{"three", []Slot{sl("n1", 3, 0, 100), sl("n1", 3, 10, 100), sl("n1", 3, 20, 30)}, "offers 9 processors"},
		{"not grouped", []Slot{sl("n1", 5, 0, 100), sl("n2", 8, 0, 100), sl("n1", 4, 50, 60)}, `slots[2]: with the slots it overlaps at 50, node "n1" offers 9`},
		{"not grouped, fit", []Slot{sl("n1", 4, 0, 100), sl("n2", 8, 0, 100), sl("n1", 4, 50, 60)}, ""},
	} {
		f := Forecast{Version: 1, Site: "a", Generated: 0, Horizon: 1000,
			Nodes: []Node{{Name: "n1", Procs: 8, Speed: 1}, {Name: "n2", Procs: 8, Speed: 1}}, Slots: tc.slots}
		if err := f.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err := f.CheckCapacity()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
