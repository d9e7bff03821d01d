package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// The parameters ReadMauiConfig follows, ignores and reports.

// policyParams are the scheduling-policy parameters the simulator follows.
var policyParams = map[string]bool{
	"RESERVATIONDEPTH": true, "RESERVATIONPOLICY": true, "BACKFILLPOLICY": true, "BACKFILLMETRIC": true,
	"BACKFILLDEPTH": true, "NODEALLOCATIONPOLICY": true, "JOBNODEMATCHPOLICY": true, "XFMINWCLIMIT": true,
	"ENABLENEGJOBPRIORITY": true, "REJECTNEGPRIOJOBS": true,
}

// policyParam handles a policy parameter; false when name is not one. A
// bad value is left in c.err.
func (c *cfgReader) policyParam(name, v string) bool {
	if !policyParams[name] {
		return false
	}
	c.err = nil
	var k int
	switch name {
	case "RESERVATIONDEPTH":
		var n int64
		if n, c.err = parseCount(name, v); c.err == nil && n < 0 {
			c.err = fmt.Errorf("%s %q: negative", name, v)
		}
		c.pol.Depth = int(n)
	case "RESERVATIONPOLICY":
		if k, c.err = pick(name, v, "DEFAULT", "HIGHEST", "CURRENTHIGHEST", "NEVER"); c.err == nil {
			c.pol.Reservation = []ReservationPolicy{CurrentHighest, Highest, CurrentHighest, NoReservations}[k]
		}
	case "BACKFILLPOLICY":
		c.backfillPolicy(v)
	case "BACKFILLMETRIC":
		if k, c.err = pick(name, v, "NONE", "PROCS", "NODES", "PROCSECONDS", "SECONDS"); c.err == nil {
			c.pol.BFMetric = []BackfillMetric{MetricProcs, MetricProcs, MetricProcs, MetricProcSeconds, MetricSeconds}[k]
		}
	case "BACKFILLDEPTH":
		var n int64
		n, c.err = parseCount(name, v)
		c.pol.BFDepth = int(max(n, 0))
	case "NODEALLOCATIONPOLICY":
		c.nodeAllocation(v)
	case "JOBNODEMATCHPOLICY":
		c.pol.ExactNode = false
		for _, w := range strings.FieldsFunc(strings.ToUpper(v), func(r rune) bool { return r == ',' || r == ' ' }) {
			switch w {
			case "EXACTNODE":
				c.pol.ExactNode = true
			case "EXACTPROC":
				c.note("JOBNODEMATCHPOLICY EXACTPROC: matching nodes by their processor count is not modelled")
			case "NONE":
			default:
				c.err = fmt.Errorf("%s %q: want EXACTNODE, EXACTPROC or NONE", name, v)
			}
		}
	case "XFMINWCLIMIT":
		c.prio.XFMinWCLimit, c.err = parseMauiDuration(name, v)
	case "ENABLENEGJOBPRIORITY", "REJECTNEGPRIOJOBS":
		var on bool
		if on, c.err = parseBool(name, v); on {
			c.prio.AllowNegative = true
			if name == "REJECTNEGPRIOJOBS" {
				c.note("REJECTNEGPRIOJOBS: jobs with a negative priority are still scheduled here (Maui rejects them)")
			}
		}
	}
	return true
}

func (c *cfgReader) backfillPolicy(v string) {
	k, err := pick("BACKFILLPOLICY", v, "NONE", "FIRSTFIT", "BESTFIT", "GREEDY", "BESTTIMEFIT", "LAZY", "PREEMPT")
	if c.err = err; err != nil {
		return
	}
	switch k {
	case 0:
		c.pol.Backfill = NoBackfill
	case 2:
		c.pol.Backfill = BestFit
	case 3, 6:
		c.pol.Backfill = FirstFit
		c.note("BACKFILLPOLICY %s is not modelled: simulated as FIRSTFIT", strings.ToUpper(v))
	default: // Maui 3.3.1 runs FIRSTFIT for the others too
		c.pol.Backfill = FirstFit
	}
}

func (c *cfgReader) nodeAllocation(v string) {
	names := []string{"NONE", "FIRSTAVAILABLE", "LASTAVAILABLE", "MINLOCAL", "MINGLOBAL", "MINRESOURCE",
		"PRIORITY", "CPULOAD", "FIRSTSET", "LOCAL", "CONTIGUOUS", "MAXBALANCE", "FASTEST"}
	k, err := pick("NODEALLOCATIONPOLICY", v, names...)
	if c.err = err; err != nil {
		return
	}
	switch k {
	case 1:
		c.pol.NodeAlloc = FirstAvailable
	case 0, 2:
		c.pol.NodeAlloc = LastAvailable
	case 5:
		c.pol.NodeAlloc = MinResource
	case 6:
		c.pol.NodeAlloc = NodePriority
	case 7:
		c.pol.NodeAlloc = MinResource
		c.note("NODEALLOCATIONPOLICY CPULOAD needs the nodes' load: simulated as MINRESOURCE (Maui's own choice for reservations)")
	default:
		c.pol.NodeAlloc = MinResource
		c.note("NODEALLOCATIONPOLICY %s is not modelled: simulated as MINRESOURCE", names[k])
	}
}

func parseBool(name, v string) (bool, error) {
	switch strings.ToUpper(v) {
	case "TRUE", "YES", "ON", "1":
		return true, nil
	case "FALSE", "NO", "OFF", "0":
		return false, nil
	}
	return false, fmt.Errorf("%s %q: want TRUE or FALSE", name, v)
}

// weightFields maps the priority weights and caps the simulator follows to
// the Priority fields they set.
var weightFields = map[string]func(p *Priority) any{
	"SERVICEWEIGHT": func(p *Priority) any { return &p.Service }, "CREDWEIGHT": func(p *Priority) any { return &p.Cred },
	"RESWEIGHT": func(p *Priority) any { return &p.Resource }, "QUEUETIMEWEIGHT": func(p *Priority) any { return &p.QueueTime },
	"XFACTORWEIGHT": func(p *Priority) any { return &p.XFactor }, "USERWEIGHT": func(p *Priority) any { return &p.User },
	"GROUPWEIGHT": func(p *Priority) any { return &p.Group }, "ACCOUNTWEIGHT": func(p *Priority) any { return &p.Account },
	"QOSWEIGHT": func(p *Priority) any { return &p.QOS }, "CLASSWEIGHT": func(p *Priority) any { return &p.Class },
	"PROCWEIGHT": func(p *Priority) any { return &p.Proc }, "PEWEIGHT": func(p *Priority) any { return &p.PE },
	"NODEWEIGHT": func(p *Priority) any { return &p.Node }, "PSWEIGHT": func(p *Priority) any { return &p.PS },
	"WALLTIMEWEIGHT": func(p *Priority) any { return &p.Walltime },
	"QUEUETIMECAP":   func(p *Priority) any { return &p.Caps.QueueTime }, "XFACTORCAP": func(p *Priority) any { return &p.Caps.XFactor },
	"USERCAP": func(p *Priority) any { return &p.Caps.User }, "GROUPCAP": func(p *Priority) any { return &p.Caps.Group },
	"ACCOUNTCAP": func(p *Priority) any { return &p.Caps.Account }, "QOSCAP": func(p *Priority) any { return &p.Caps.QOS },
	"CLASSCAP": func(p *Priority) any { return &p.Caps.Class }, "PROCCAP": func(p *Priority) any { return &p.Caps.Proc },
	"PECAP": func(p *Priority) any { return &p.Caps.PE }, "NODECAP": func(p *Priority) any { return &p.Caps.Node },
	"PSCAP": func(p *Priority) any { return &p.Caps.PS }, "WALLTIMECAP": func(p *Priority) any { return &p.Caps.Walltime },
	"SERVICEWCAP": func(p *Priority) any { return &p.Caps.Service }, "CREDCAP": func(p *Priority) any { return &p.Caps.Cred },
	"RESCAP": func(p *Priority) any { return &p.Caps.Resource },
}

// weightParam sets a weight or cap; false when name is not one.
func (c *cfgReader) weightParam(name, v string) bool {
	f, ok := weightFields[name]
	if !ok {
		return false
	}
	n, err := parseCount(name, v)
	c.err = err
	switch ptr := f(c.prio).(type) {
	case *int64:
		*ptr = n
	case *float64:
		*ptr = float64(max(n, 0))
	}
	return true
}

// credLine handles USERCFG[name], GROUPCFG, ACCOUNTCFG, CLASSCFG, QOSCFG
// (PRIORITY=, and QTWEIGHT=/XFWEIGHT= for a QOS) and reports the other
// *CFG lines that shape scheduling.
func (c *cfgReader) credLine(kind, name string, attrs []string) error {
	var prio *map[string]int64
	switch kind {
	case "USERCFG":
		prio = &c.prio.UserPrio
	case "GROUPCFG":
		prio = &c.prio.GroupPrio
	case "ACCOUNTCFG":
		prio = &c.prio.AccountPrio
	case "CLASSCFG":
		prio = &c.prio.ClassPrio
	case "QOSCFG":
		prio = &c.prio.QOSPrio
		if c.pol.QOS == nil {
			c.pol.QOS = &QOSAccess{} // a job without a QOS has DEFAULT's
		}
	case "SCHEDCFG", "RMCFG", "AMCFG", "CLIENTCFG", "SYSCFG":
		return nil
	case "SRCFG":
		return c.srLine(name, attrs)
	case "NODECFG":
		return c.nodeCfgLine(name, attrs)
	default:
		c.note("%s[%s]: not modelled", kind, name)
		return nil
	}
	if name == "" {
		return fmt.Errorf("%s without a [name]", kind)
	}
	for _, a := range attrs {
		key, val, _ := strings.Cut(a, "=")
		key = strings.ToUpper(key)
		switch {
		case key == "PRIORITY":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("%s[%s] PRIORITY=%q: not an integer", kind, name, val)
			}
			setIn(prio, name, n)
		case kind == "QOSCFG" && (key == "QTWEIGHT" || key == "XFWEIGHT"):
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("%s[%s] %s=%q: not an integer", kind, name, key, val)
			}
			if key == "QTWEIGHT" {
				setIn(&c.prio.QOSQTWeight, name, n)
			} else {
				setIn(&c.prio.QOSXFWeight, name, n)
			}
		case c.qosAttr(kind, name, key, val), c.qosFlagsAttr(kind, name, key, val):
		case c.limitAttr(kind, name, key, val), c.fsTargetAttr(kind, name, key, val):
			if c.err != nil {
				return c.err
			}
		default:
			c.credNote(kind, name, key, val)
		}
	}
	return nil
}

// limitKeys are the usage limits the simulator follows, on USERCFG,
// GROUPCFG, ACCOUNTCFG, CLASSCFG and QOSCFG.
var limitKeys = map[string]LimitKind{"MAXJOB": LimitJobs, "MAXPROC": LimitProcs, "MAXPS": LimitPS, "MAXWC": LimitWC}

var credKindOf = map[string]CredKind{"USERCFG": CredUser, "GROUPCFG": CredGroup, "ACCOUNTCFG": CredAccount, "CLASSCFG": CredClass, "QOSCFG": CredQOS}

// limitAttr reads a usage limit (MAXJOB=3, or soft,hard: MAXJOB=2,4);
// false when key is not one the simulator follows. A bad value is left
// in c.err.
func (c *cfgReader) limitAttr(kind, name, key, val string) bool {
	k, ok := limitKeys[key]
	ck, okKind := credKindOf[kind]
	if !ok || !okKind {
		return false
	}
	c.err = nil
	sv, hv, two := strings.Cut(val, ",")
	soft, err := strconv.ParseInt(sv, 10, 64)
	hard := soft
	if err == nil && two {
		hard, err = strconv.ParseInt(hv, 10, 64)
	}
	if err != nil || soft < 0 || hard < 0 {
		c.err = fmt.Errorf("%s[%s] %s=%q: want a count, or soft,hard", kind, name, key, val)
		return true
	}
	if c.lim == nil {
		c.lim, c.limAt = &Limits{}, c.line
	}
	c.lim.set(ck, name, k, soft, hard)
	return true
}

func setIn(m *map[string]int64, k string, v int64) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[k] = v
}

// credNote reports a *CFG attribute the simulator does not follow.
func (c *cfgReader) credNote(kind, name, key, val string) {
	switch {
	case kind == "QOSCFG" && strings.HasPrefix(key, "OMAX"):
		c.note("%s[%s] %s=%s: QOS override limits are not modelled", kind, name, key, val)
	case strings.HasPrefix(key, "MAX") || strings.HasPrefix(key, "MIN"):
		c.note("%s[%s] %s=%s: usage limits are not modelled", kind, name, key, val)
	case strings.HasPrefix(key, "FS"):
		c.note("%s[%s] %s=%s: fairshare is not modelled", kind, name, key, val)
	case key == "QDEF" || key == "QLIST":
		c.note("%s[%s] %s=%s: QOS access is not modelled (a job has the QOS it asked for)", kind, name, key, val)
	default:
		c.note("%s[%s] %s=%s: not modelled", kind, name, key, val)
	}
}

// harmless reports parameters that do not change where and when jobs run
// in a simulation (how Maui talks to the resource manager, logs,
// statistics, administration, its own simulation mode).
func harmless(name string) bool {
	for _, p := range []string{"SERVER", "LOG", "ADMIN", "SIM", "RM", "AM", "BANK", "CHECKPOINT", "STAT",
		"NOTIFICATION", "MAIL", "CLIENT", "DISPLAY", "TRAP", "PLOT", "DEFAULTDOMAIN", "DIRECTORY", "EVENT",
		"FEEDBACK", "TOOLS", "LOCKFILE", "USESYSLOG", "NODEPOLLFREQUENCY", "NODEPURGETIME", "JOBPURGETIME",
		"NODESYNCTIME", "JOBSYNCTIME", "MINADMINSTIME", "MAXSLEEPITERATION", "MCSOCKETPROTOCOL", "RESOURCE",
		"MACHINECONFIGFILE", "DEFERTIME", "DEFERCOUNT", "DEFERSTARTCOUNT", "JOBMAXSTARTTIME",
		"USEJOBREGEX", "FEATURE", "RESDEPTH", "REMOTESTARTCOMMAND", "RESERVATIONRETRYTIME", "SCHEDCFG"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// unmodelled are parameters that shape scheduling in ways the simulator
// does not follow, with what they are; a value that switches them off is
// not reported.
var unmodelled = map[string]string{
	"UFSWEIGHT": "the old fairshare weights", "GFSWEIGHT": "the old fairshare weights", "AFSWEIGHT": "the old fairshare weights",
	"FSENFORCEMENT": "fairshare enforcement", "FSCONFIGFILE": "fairshare targets in a file of their own (not read)", "FSSECONDARYGROUPS": "secondary groups' fairshare",
	"BYPASSWEIGHT": "the bypass count", "SPVIOLATIONWEIGHT": "soft policy violation",
	"TARGETWEIGHT": "queue-time and expansion-factor targets", "TARGETQUEUETIMEWEIGHT": "the queue-time target",
	"TARGETXFACTORWEIGHT": "the expansion-factor target", "QOSTARGETQT": "the queue-time target",
	"QOSTARGETXF": "the expansion-factor target", "ATTRWEIGHT": "job attribute priority",
	"MEMWEIGHT": "the memory a job asks for", "DISKWEIGHT": "the disk a job asks for",
	"SWAPWEIGHT": "the swap a job asks for", "UPROCWEIGHT": "per-user processor usage",
	"UJOBWEIGHT": "per-user job counts", "USAGEWEIGHT": "usage", "CONSUMEDWEIGHT": "usage",
	"REMAININGWEIGHT": "usage", "PERCENTWEIGHT": "usage", "DIRECTSPECWEIGHT": "the old priority weights",
	"QUEUETIMETARGETWEIGHT": "the queue-time target", "SERVICETARGETWEIGHT": "the old priority weights",
	"JOBPRIOACCRUALPOLICY": "how queue time accrues", "USESYSTEMQUEUETIME": "system queue time",
	"NODEACCESSPOLICY": "node sharing between jobs", "NODEAVAILABILITYPOLICY": "node availability measures",
	"PREEMPTPOLICY": "preemption", "NODESETPOLICY": "node sets", "NODESETATTRIBUTE": "node sets",
	"NODESETLIST": "node sets", "NODESETDELAY": "node sets", "BFCHUNKSIZE": "backfill chunking",
	"BFCHUNKDURATION": "backfill chunking", "BFPRIORITYPOLICY": "backfill job order",
	"RESERVATIONQOSLIST": "reservation depth per QOS", "RESERVATIONTHRESHOLDTYPE": "reservation thresholds",
	"RESERVATIONTHRESHOLDVALUE": "reservation thresholds", "MAXJOBPERITERATION": "a cap on starts per iteration",
	"NODEMAXLOAD": "node load", "NODELOADPOLICY": "node load", "ALLOCLOCALITYPOLICY": "allocation locality",
	"TASKDISTRIBUTIONPOLICY": "task distribution", "JOBSIZEPOLICY": "job size policy",
	"SYSTEMMAXJOBWALLTIME": "a system walltime limit", "SYSTEMMAXPROCPERJOB": "a system job size limit",
	"SYSTEMMAXPROCSECONDPERJOB": "a system job size limit", "ENABLEMULTINODEJOBS": "single-node jobs only",
	"NODECPUOVERCOMMITFACTOR": "processor overcommit", "JOBMAXOVERRUN": "walltime overrun",
	"USEMACHINESPEED": "node speed", "QOSPRIORITY": "the old QOS priority", "QOSFLAGS": "QOS flags",
}

func init() {
	for _, kind := range []string{"JOB", "PROC", "NODE", "PE", "PROCSECOND", "JOBQUEUED"} {
		for _, who := range []string{"USER", "GROUP", "ACCOUNT"} {
			unmodelled["MAX"+kind+"PER"+who+"COUNT"] = "usage limits"
			unmodelled["MAX"+kind+"PER"+who+"POLICY"] = "usage limits"
			unmodelled["SMAX"+kind+"PER"+who+"COUNT"] = "usage limits"
		}
	}
}
