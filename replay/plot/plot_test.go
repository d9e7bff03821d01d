package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"testing"
)

func sample() ([]Chart, *Gantt) {
	c := Chart{Title: "AWRT", Unit: "s", Groups: []string{"msf=1", "msf=1.6"}, Series: []string{"a", "b<&>"},
		Values: [][]float64{{10, 20}, {math.NaN(), 5}}}
	g := &Gantt{Title: "window", From: 0, To: 100,
		Sites: []GanttSite{{Name: "x", Procs: 4}, {Name: "y", Procs: 2}},
		Jobs: []GanttJob{
			{ID: "1", Site: 0, Procs: 3, Start: 0, End: 50},
			{ID: "2", Site: 0, Procs: 1, Start: 10, End: 60},
			{ID: "g", Grid: true, Site: 0, Procs: 3, Start: 50, End: 70, Reserved: 90},
			{ID: "h", Grid: true, Site: 1, Procs: 2, Start: 50, End: 70},
		}}
	return []Chart{c}, g
}

func TestWriteIsWellFormedAndDeterministic(t *testing.T) {
	charts, g := sample()
	var a, b bytes.Buffer
	if err := Write(&a, "t", charts, g); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, "t", charts, g); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes differ")
	}
	d := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}

func TestLanesNeverShareAProcessor(t *testing.T) {
	_, g := sample()
	lanes := g.lanes()
	type use struct {
		job        int
		start, end int64
	}
	perProc := map[[2]int][]use{}
	for k, runs := range lanes {
		j := g.Jobs[k]
		n := 0
		for _, r := range runs {
			n += r.n
			for p := r.lo; p < r.lo+r.n; p++ {
				key := [2]int{j.Site, p}
				for _, u := range perProc[key] {
					if u.start < max(j.End, j.Reserved) && j.Start < u.end {
						t.Fatalf("jobs %d and %d share processor %d of site %d", u.job, k, p, j.Site)
					}
				}
				perProc[key] = append(perProc[key], use{k, j.Start, max(j.End, j.Reserved)})
			}
		}
		if n != j.Procs {
			t.Fatalf("job %s drawn on %d processors, has %d", j.ID, n, j.Procs)
		}
	}
}
