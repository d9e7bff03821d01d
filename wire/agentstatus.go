package wire

// QueuedJob is a local job waiting in a site's scheduler with the start
// the agent's last forecast predicts for it, as the agent's status
// (VerbAgentStatus) lists it, so an admin can check the forecast job by
// job against the scheduler (showstart, squeue --start). Times are Unix
// seconds; a start of 0 is beyond the forecast's horizon.
type QueuedJob struct {
	Job       string `json:"job"`
	User      string `json:"user,omitempty"`
	Queue     string `json:"queue,omitempty"`
	Procs     int    `json:"procs"`
	Walltime  int64  `json:"walltime"`
	Submitted int64  `json:"submitted"`
	Start     int64  `json:"predicted_start,omitempty"`
	End       int64  `json:"predicted_end,omitempty"`
	// FirstStart is the start predicted when the agent first saw the job
	// waiting (the forecast a grid planner had the longest).
	FirstStart int64 `json:"first_predicted_start,omitempty"`
}
