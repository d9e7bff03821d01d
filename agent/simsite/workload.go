package simsite

import (
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
	in, _, err := swf.Unzipped(r)
	if err != nil {
		return nil, nil, err
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
