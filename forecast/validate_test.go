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
