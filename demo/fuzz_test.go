package demo

import (
	"bytes"
	"io/fs"
	"testing"
)

// FuzzReadSWF: any input is read or refused with an error, never a panic;
// every job read has positive processors and walltime.
func FuzzReadSWF(f *testing.F) {
	names, _ := fs.Glob(traces, "traces/*.swf")
	for _, n := range names {
		data, _ := fs.ReadFile(traces, n)
		f.Add(data[:min(len(data), 4000)])
	}
	f.Add([]byte("1 0 10 100 4 1 1 4 200 1 1 1 1 1 1 1 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, _, err := readSWF(bytes.NewReader(data), "f")
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.Procs <= 0 || j.Walltime <= 0 {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}
