package slurm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// seed adds every captured answer matching pattern to the corpus.
func seed(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	if len(files) == 0 {
		f.Fatalf("no seeds for %s", pattern)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseSinfoJSON(f *testing.F) {
	seed(f, "sinfo*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes, err := ParseSinfoJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.Name == "" {
				t.Fatal("a node without a name")
			}
			_ = n.Usable()
		}
	})
}

func FuzzParseSqueueJSON(f *testing.F) {
	seed(f, "squeue*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ParseSqueueJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.End != nil && j.Start == nil {
				t.Fatalf("job %d: an end without a start", j.ID)
			}
			if j.TimeLimit != nil && *j.TimeLimit < 0 {
				t.Fatalf("job %d: negative limit", j.ID)
			}
		}
	})
}

func FuzzParseReservations(f *testing.F) {
	seed(f, "show-reservation-*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseReservations(bytes.NewReader(b), time.UTC)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Duration != nil && *r.Duration < 0 {
				t.Fatalf("%s: negative duration", r.Name)
			}
			_, _ = ExpandHostlist(r.Nodes)
		}
	})
}

func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"ghost[1-2],vm", "vm", "n[01-03,7]", "(null)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandHostlist(s)
		if err == nil && len(names) > maxHostlist {
			t.Fatalf("%d names", len(names))
		}
	})
}

// slurm.conf: reading never panics, and what reads gives a policy or an
// error, never both.
func FuzzReadConf(f *testing.F) {
	seed(f, "slurm.conf")
	f.Add([]byte("SchedulerParameters=bf_max_job_test=20,bf_continue\nPartitionName=p Nodes=ALL OverSubscribe=FORCE:4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ReadConf(bytes.NewReader(b))
		if err != nil {
			return
		}
		p, notes, err := c.Policy()
		if err != nil && (p.Depth != 0 || notes != nil) {
			t.Fatalf("a policy with an error: %+v %q %v", p, notes, err)
		}
	})
}

// A reservation's hosts never hold negative cores.
func FuzzReservationHosts(f *testing.F) {
	seed(f, "show-reservation*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseReservations(bytes.NewReader(b), time.UTC)
		if err != nil {
			return
		}
		for _, r := range rs {
			for _, h := range r.Hosts(map[string]int{"vm": 8}) {
				if h.CPUs < 0 {
					t.Fatalf("%+v: %+v", r, h)
				}
			}
		}
	})
}
