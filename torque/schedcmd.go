package torque

import "fmt"

// SchedCmd is the 4-byte big-endian command pbs_server writes to the
// scheduler port (Torque's sched_cmds.h).
type SchedCmd int32

// Scheduler commands.
const (
	SchedNull      SchedCmd = 0
	SchedNew       SchedCmd = 1 // a job was queued
	SchedTerm      SchedCmd = 2 // a job ended
	SchedTime      SchedCmd = 3 // scheduler_iteration elapsed
	SchedRecyc     SchedCmd = 4 // job requeued (rerun)
	SchedCmdReq    SchedCmd = 5 // qmgr asked for a cycle
	SchedConfigure SchedCmd = 7
	SchedQuit      SchedCmd = 8
	SchedRuleset   SchedCmd = 9
	SchedFirst     SchedCmd = 10 // scheduling turned on / server start
	SchedJobResv   SchedCmd = 11
)

var schedNames = map[SchedCmd]string{
	SchedNull: "NULL", SchedNew: "NEW", SchedTerm: "TERM", SchedTime: "TIME",
	SchedRecyc: "RECYC", SchedCmdReq: "CMD", SchedConfigure: "CONFIGURE",
	SchedQuit: "QUIT", SchedRuleset: "RULESET", SchedFirst: "FIRST", SchedJobResv: "JOBRESV",
}

// Known reports whether c is a command Torque defines.
func (c SchedCmd) Known() bool { _, ok := schedNames[c]; return ok }

func (c SchedCmd) String() string {
	if n, ok := schedNames[c]; ok {
		return n
	}
	return fmt.Sprintf("SchedCmd(%d)", int32(c))
}
