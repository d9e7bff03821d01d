package main

import (
	"bytes"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// A reservation's submit options are shown with the command they are
// for: sbatch on a Slurm site, qsub on a Torque/Maui one.
func TestStatusNamesTheSubmitCommandOfEachSiteKind(t *testing.T) {
	j := wire.JobStatus{Job: forecast.JobRequest{ID: "g1", Procs: 12, Walltime: 600}, State: wire.JobReserved,
		Reservations: []wire.Reservation{
			{ID: "la.g1", Site: "sl", Start: 100, End: 700, Submit: "--reservation=la.g1 --job-name=la.g1.0"},
			{ID: "la.g1.0", Site: "tm", Start: 100, End: 700, Submit: "-A la.acct0 -W x=FLAGS:ADVRES:la.g1.0 -N la.g1.0"}}}
	var b bytes.Buffer
	if err := writeJobDetail(&b, j, 50); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sbatch      --reservation=la.g1 --job-name=la.g1.0", "qsub        -A la.acct0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}
