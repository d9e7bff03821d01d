package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"lookahead/internal/cli"
	"lookahead/replay"
)

// runStudies runs the scenarios with the --progress bar, after checking
// that --records can be written (a study's runs are long; a directory
// found unwritable after them would lose them). Stopped by a signal it
// says so on stderr: nothing was printed or written.
func runStudies(ctx context.Context, stderr io.Writer, o *replayOptions, scs []replay.Scenario, in replay.Inputs) ([]replay.Report, error) {
	if err := checkRecordsDir(o.records); err != nil {
		return nil, err
	}
	opts, done, err := studyOptions(ctx, stderr, o)
	if err != nil {
		return nil, err
	}
	reps, err := replay.Studies(scs, in, opts)
	done()
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "replay: interrupted before the runs finished: no report printed, no records written\n")
	}
	return reps, err
}

// checkRecordsDir makes the --records directory and checks a file can be
// made in it.
func checkRecordsDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Usagef("--records %s: %v (want a directory the job records can be written to)", dir, err)
	}
	f, err := os.CreateTemp(dir, ".records-check-*")
	if err != nil {
		return cli.Usagef("--records %s: cannot write in it: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeRecords writes every run's job records as CSV, one file per run
// (scenario, seed, point, policy), for per-job evidence: id, grid (1/0),
// processors, submit, start, end (Unix s), sites (their indexes joined by
// +), credits paid. Each file appears whole or not at all (written aside,
// then renamed); a signal stops the writing between files and is said.
func writeRecords(ctx context.Context, stderr io.Writer, dir string, scs []replay.Scenario, reps []replay.Report) error {
	if dir == "" {
		return nil
	}
	clean := strings.NewReplacer("/", "_", " ", "_", "[", "_", "]", "", ",", "_", "=", "-")
	written, total := 0, 0
	for _, rep := range reps {
		total += len(rep.Results)
	}
	for k, rep := range reps {
		for _, r := range rep.Results {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "replay: interrupted while writing records: %d of %d files written to %s, no report printed\n", written, total, dir)
				return ctx.Err()
			}
			name := fmt.Sprintf("%s-seed%d-%s-%s.csv", rep.Scenario, scs[k].Seed, r.Label, r.Policy)
			if err := writeFileWhole(filepath.Join(dir, clean.Replace(name)), recordsCSV(r.Records)); err != nil {
				return fmt.Errorf("records: %w", err)
			}
			written++
		}
	}
	return nil
}

func recordsCSV(records []replay.JobRecord) []byte {
	var b strings.Builder
	b.WriteString("id,grid,procs,submit,start,end,sites,credits\n")
	for _, j := range records {
		var sites []string
		for _, p := range j.Parts {
			sites = append(sites, strconv.Itoa(p.Site))
		}
		grid := 0
		if j.Grid {
			grid = 1
		}
		fmt.Fprintf(&b, "%s,%d,%d,%d,%d,%d,%s,%.6g\n", j.ID, grid, j.Procs(), j.Submit, j.Start, j.End, strings.Join(sites, "+"), j.Credits)
	}
	return []byte(b.String())
}

// writeFileWhole writes b to path through a temporary file in the same
// directory, renamed over path once complete.
func writeFileWhole(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
