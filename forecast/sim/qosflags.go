package sim

import "strings"

// QOS flags (QOSCFG[name] QFLAGS=…). Maui 3.3.1 reads the value with
// strstr for each flag name (MQOSFlagsFromString, MQOS.c), so "A:B", "A,B"
// and "AB" all set A and B. What each does in its scheduling code:
//
//   - NOBF: MQueueBackFill leaves the QOS's jobs out of every backfill
//     queue; they start only in the priority pass. Followed.
//   - IGNJOBPERUSER, IGNPROCPERUSER, IGNNODEPERUSER, IGNPSPERUSER,
//     IGNJOBQUEUEDPERUSER, IGNSYSMAXPROC, IGNSYSMAXPS (and IGNUSER,
//     IGNSYSTEM, IGNALL, which set groups of them): set the QOS's
//     override limits (L.OAP, L.OJP, L.OIP) to -1, unlimited; QOS override
//     limits are not modelled (listed).
//   - PREEMPTOR, PREEMPTEE, PREEMPTSPV: preemption, not modelled (listed).
//   - DEDICATED: the job takes its nodes alone (mjfNASingleJob); not
//     modelled (listed).
//   - RESERVEALWAYS: a non-preemptible reservation for every job of the
//     QOS in MQueueScheduleRJobs; USERESERVED: the job runs only inside an
//     advance reservation; not modelled (listed).
//   - IGNSYSMAXTIME, IGNSRMAXTIME, NORESERVATION, RESTARTPREEMPT, NTR,
//     RUNNOW, IGNHOSTLIST: set a bit nothing in 3.3.1's scheduling reads
//     (IGNHOSTLIST drops a job's host list, which simulated jobs do not
//     have): nothing to follow.

// qosFlagNotes are the flags the simulator does not follow, with why.
var qosFlagNotes = []struct{ flag, why string }{
	{"IGNJOBPERUSER", "QOS override limits"}, {"IGNPROCPERUSER", "QOS override limits"},
	{"IGNNODEPERUSER", "QOS override limits"}, {"IGNPSPERUSER", "QOS override limits"},
	{"IGNJOBQUEUEDPERUSER", "QOS override limits"}, {"IGNSYSMAXPROC", "QOS override limits"},
	{"IGNSYSMAXPS", "QOS override limits"}, {"IGNUSER", "QOS override limits"},
	{"IGNSYSTEM", "QOS override limits"}, {"IGNALL", "QOS override limits"},
	{"PREEMPTOR", "preemption"}, {"PREEMPTEE", "preemption"}, {"PREEMPTSPV", "preemption"},
	{"DEDICATED", "dedicated nodes"}, {"RESERVEALWAYS", "QOS reservations"}, {"USERESERVED", "jobs bound to reservations"},
}

// qosFlagsAttr reads QOSCFG[name] QFLAGS=; false for other keys.
func (c *cfgReader) qosFlagsAttr(kind, name, key, val string) bool {
	if kind != "QOSCFG" || key != "QFLAGS" {
		return false
	}
	if c.pol.QOS == nil {
		c.pol.QOS = &QOSAccess{}
	}
	if strings.Contains(val, "NOBF") {
		if c.pol.QOS.NoBackfill == nil {
			c.pol.QOS.NoBackfill = map[string]bool{}
		}
		c.pol.QOS.NoBackfill[name] = true
	}
	for _, n := range qosFlagNotes {
		if strings.Contains(val, n.flag) {
			c.note("%s[%s] QFLAGS %s: not modelled (%s)", kind, name, n.flag, n.why)
		}
	}
	return true
}

// noBackfill reports whether j's QOS keeps it out of backfill (NOBF).
func (e *Engine) noBackfill(j *job) bool {
	return e.policy.QOS != nil && e.policy.QOS.NoBackfill[j.QOS]
}
