package torque

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func seedDir(f *testing.F, glob string) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", glob, err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzParseBatchJobs(f *testing.F) {
	seedDir(f, filepath.Join(liveDir, "*qstat*.out"))
	seedDir(f, "testdata/torque-*/phase*/*qstat_f_x*.out")
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseBatchJobs(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.ID == "" || j.State == "" {
				t.Fatalf("accepted a job without id or state: %+v", j)
			}
		}
	})
}

func FuzzParseQsubID(f *testing.F) {
	seedDir(f, filepath.Join(liveDir, "*qsub*"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := ParseQsubID(data)
		if err == nil && (!looksLikeJobID(id) || !bytes.Contains(data, []byte(id))) {
			t.Fatalf("accepted %q from %q", id, data)
		}
	})
}
