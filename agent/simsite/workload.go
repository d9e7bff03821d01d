package simsite

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"

	"lookahead/forecast/sim"
	"lookahead/forecast/swf"
)

// ReadWorkload reads an SWF trace (plain or gzipped) as a simulated
// site's local workload: job ids get prefix and a dot, Submit is relative
// to the first job's, users are "u<N>" and every job goes to queue
// "batch". Records the archive marks as missing, and malformed lines, are
// left out and returned in skipped (swf.ReadLenient); a trace whose every
// record is left out is an error.
func ReadWorkload(r io.Reader, prefix string) (jobs []sim.Job, skipped []swf.Skip, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		defer z.Close()
		in = z
	}
	tr, err := swf.ReadLenient(in, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := swf.NoUsableJob(len(tr.Jobs), tr.Skipped); err != nil {
		return nil, tr.Skipped, err
	}
	jobs = tr.SimJobs()
	for i := range jobs {
		j := &jobs[i]
		j.ID = prefix + "." + j.ID
		j.Submit -= tr.Jobs[0].Submit
		j.User = "u" + j.User
		j.Queue = "batch"
	}
	return jobs, tr.Skipped, nil
}
