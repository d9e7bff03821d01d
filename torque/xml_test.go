package torque

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/forecast"
)

// phaseDirs are the captured command-output folders copied into testdata.
var phaseDirs = []string{
	"torque-6.1.3/phaseA-no-scheduler",
	"torque-6.1.3/phaseB-with-maui",
	"torque-4.2.10/phaseA-no-scheduler",
	"torque-2.5.13/phaseA-no-scheduler",
}

type indexRow struct{ dir, name, cmd, exit string }

func readRows(t *testing.T, prefix string) []indexRow {
	t.Helper()
	var rows []indexRow
	for _, d := range phaseDirs {
		f, err := os.Open(filepath.Join("testdata", d, "INDEX.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p := strings.SplitN(sc.Text(), "\t", 3)
			if len(p) == 3 && p[1] == "0" && strings.HasPrefix(p[2], prefix) {
				rows = append(rows, indexRow{d, p[0], p[2], p[1]})
			}
		}
		f.Close()
	}
	if len(rows) == 0 {
		t.Fatalf("no captured rows for %q", prefix)
	}
	return rows
}

func goldenName(r indexRow) string {
	return strings.ReplaceAll(r.dir, "/", "_") + "_" + r.name
}

// Every captured qstat XML of every version parses; its jobs match golden
// JSON, and invariants hold that do not depend on the golden files.
func TestParseQstatXMLCaptures(t *testing.T) {
	rows := append(readRows(t, "qstat -f -x"), readRows(t, "qstat -x")...)
	for _, r := range rows {
		t.Run(goldenName(r), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", r.dir, r.name+".out"))
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := ParseQstatXML(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if want := bytes.Count(data, []byte("<Job>")); len(jobs) != want {
				t.Fatalf("parsed %d jobs, the XML has %d", len(jobs), want)
			}
			for _, j := range jobs {
				checkJobInvariants(t, j)
			}
			checkGolden(t, "qstat_"+goldenName(r), jobs)
		})
	}
}

func checkJobInvariants(t *testing.T, j forecast.LocalJob) {
	t.Helper()
	if j.Procs < 1 || j.Submitted == 0 || j.User == "" || j.Queue == "" {
		t.Errorf("job %s: incomplete %+v", j.ID, j)
	}
	held := 0
	for _, h := range j.Hosts {
		held += h.Procs
	}
	if j.Started > 0 && !IsArrayParent(j.ID) && held != j.Procs {
		t.Errorf("job %s: exec_host holds %d procs, request is %d", j.ID, held, j.Procs)
	}
	if j.Walltime > 0 && j.Used > j.Walltime {
		t.Errorf("job %s: used %d > walltime %d", j.ID, j.Used, j.Walltime)
	}
}

func TestParsePbsnodesXMLCaptures(t *testing.T) {
	for _, r := range readRows(t, "pbsnodes -x") {
		t.Run(goldenName(r), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", r.dir, r.name+".out"))
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := ParsePbsnodesXML(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if want := bytes.Count(data, []byte("<Node>")); len(nodes) != want || want == 0 {
				t.Fatalf("parsed %d nodes, the XML has %d", len(nodes), want)
			}
			for _, n := range nodes {
				if n.Procs != 4 || len(n.State) == 0 {
					t.Errorf("node %s: %+v", n.Name, n)
				}
				slots := 0
				for _, j := range n.Jobs {
					slots += len(j.Slots)
				}
				if slots > n.Procs {
					t.Errorf("node %s: jobs hold %d slots of %d", n.Name, slots, n.Procs)
				}
			}
			checkGolden(t, "pbsnodes_"+goldenName(r), nodes)
		})
	}
}
