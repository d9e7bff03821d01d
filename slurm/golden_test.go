package slurm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the parsers")

// goldenParsers parse each captured answer; the golden file is the parse
// as indented JSON (go test ./slurm -run Golden -update rewrites them).
var goldenParsers = map[string]func(f *os.File) (any, error){
	"sinfo":   func(f *os.File) (any, error) { return ParseSinfoJSON(f) },
	"squeue":  func(f *os.File) (any, error) { return ParseSqueueJSON(f) },
	"show-re": func(f *os.File) (any, error) { return ParseReservations(f, time.UTC) },
}

func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	n := 0
	for _, path := range files {
		name := filepath.Base(path)
		parse := parserFor(name)
		if parse == nil {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			v, err := parse(open(t, name))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(v, "", "  ")
			got = append(got, '\n')
			gold := filepath.Join("testdata", "golden", name+".golden.json")
			if *update {
				if err := os.WriteFile(gold, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(gold)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parse of %s differs from %s:\n%s", name, gold, got)
			}
		})
	}
	if n < 22 {
		t.Fatalf("only %d captured answers have a golden file", n)
	}
}

func parserFor(name string) func(*os.File) (any, error) {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "lifecycle-"), "resv-end-")
	switch {
	case strings.HasPrefix(name, "sinfo") && strings.HasSuffix(name, ".json"):
		return goldenParsers["sinfo"]
	case strings.HasPrefix(name, "squeue") && strings.HasSuffix(name, ".json"):
		return goldenParsers["squeue"]
	case strings.HasPrefix(name, "show-reservation") && strings.HasSuffix(name, ".txt"):
		return goldenParsers["show-re"]
	}
	return nil
}
