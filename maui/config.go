package maui

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// SimConfig is what a private simulation's maui.cfg needs besides the
// site's policy.
type SimConfig struct {
	Host       string // SERVERHOST (default "localhost")
	Port       int    // SERVERPORT; Maui also binds Port+1
	Admin      string // ADMIN1: the user running the clients
	Step       int64  // initial RMPOLLINTERVAL in seconds (0: no clock move)
	QueueDepth int    // SIMINITIALQUEUEDEPTH, at least the job count
}

// simOwned are the parameters the simulation sets itself; site lines for
// them are dropped. Keys are compared without their [index].
var simOwned = map[string]bool{
	"SERVERHOST": true, "SERVERPORT": true, "SERVERMODE": true, "SERVERNAME": true, "SERVERHOMEDIR": true,
	"SCHEDCFG": true, "RMCFG": true, "AMCFG": true, "RMPOLLINTERVAL": true, "RMSERVER": true, "RMTYPE": true,
	"RMPORT": true, "RMHOST": true, "RMAUTHTYPE": true, "RMTIMEOUT": true, "RMNAME": true,
	"LOGFILE": true, "LOGLEVEL": true, "LOGDIR": true, "LOGFILEMAXSIZE": true, "LOGFILEROLLDEPTH": true, "LOGFACILITY": true,
	"STATDIR": true, "TOOLSDIR": true, "LOCKFILE": true, "CHECKPOINTFILE": true, "CHECKPOINTINTERVAL": true,
	"CHECKPOINTEXPIRATIONTIME": true, "ADMIN1": true, "ADMIN2": true, "ADMIN3": true, "ADMINHOST": true, "ADMINHOSTS": true,
	"NOTIFICATIONPROGRAM": true, "MAILPROGRAM": true, "SERVERCONFIGFILE": true, "QOSPRIORITY": true,
}

// priorityAttrs are attributes stripped from credential config lines: the
// simulation imposes the live priority order instead.
var priorityAttrs = []string{"PRIORITY=", "QTWEIGHT=", "XFWEIGHT=", "FSTARGET="}

// credLines are the config keys whose attribute lists may carry priorities.
var credLines = map[string]bool{"CLASSCFG": true, "QOSCFG": true, "USERCFG": true, "GROUPCFG": true, "ACCOUNTCFG": true}

// WriteSimConfig writes a private simulation maui.cfg: the site's policy
// (backfill, reservation depth and policy, node allocation, class/QOS/user
// limits, standing reservations, ...) copied from site (may be nil), minus
// what the simulation owns (server, RM, logging, SIM*, admin), minus
// JOBNODEMATCHPOLICY EXACTNODE (BuildTraces applies it: see
// TraceOptions.ExactNode) and minus priorities. Priority weights are replaced: every component but CRED is
// 0, and CLASSCFG[running] PRIORITY=1000000 starts the already-running
// jobs first; all queued jobs thus share one priority and Maui keeps their
// trace order, which BuildTraces makes the live queue's order.
func WriteSimConfig(w io.Writer, site io.Reader, sc SimConfig) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# lookahead simulation config (generated; Maui 3.3.1 SERVERMODE SIMULATION)")
	if site != nil {
		kept, dropped, err := sitePolicy(site)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "# site policy (%d lines copied; dropped: %s)\n", len(kept), strings.Join(dropped, " "))
		for _, l := range kept {
			fmt.Fprintln(bw, l)
		}
	}
	fmt.Fprintln(bw, "# simulation")
	for _, kv := range simParams(sc) {
		fmt.Fprintf(bw, "%-24s %s\n", kv[0], kv[1])
	}
	return bw.Flush()
}

func simParams(sc SimConfig) [][2]string {
	host := orDefault(sc.Host, "localhost")
	p := [][2]string{
		{"SERVERHOST", host}, {"SERVERPORT", fmt.Sprint(sc.Port)}, {"SERVERMODE", "SIMULATION"},
		{"ADMIN1", orDefault(sc.Admin, "root")}, {"RMPOLLINTERVAL", fmt.Sprint(sc.Step)},
		{"LOGFILE", "maui.log"}, {"LOGLEVEL", "1"}, {"STATDIR", "stats"},
		{"SIMRESOURCETRACEFILE", "traces/resource.trace"}, {"SIMWORKLOADTRACEFILE", "traces/workload.trace"},
		{"SIMJOBSUBMISSIONPOLICY", "NORMAL"}, {"SIMINITIALQUEUEDEPTH", fmt.Sprint(max(sc.QueueDepth, 1))},
		{"SIMSTOPITERATION", "1"}, {"SIMAUTOSHUTDOWN", "FALSE"}, {"CHECKPOINTINTERVAL", "0"},
	}
	for _, w := range []string{"SERVICEWEIGHT", "TARGETWEIGHT", "ATTRWEIGHT", "FSWEIGHT", "RESWEIGHT", "USAGEWEIGHT",
		"QUEUETIMEWEIGHT", "XFACTORWEIGHT", "BYPASSWEIGHT", "USERWEIGHT", "GROUPWEIGHT", "ACCOUNTWEIGHT", "QOSWEIGHT"} {
		p = append(p, [2]string{w, "0"})
	}
	return append(p, [2]string{"CREDWEIGHT", "1"}, [2]string{"CLASSWEIGHT", "1"},
		[2]string{"CLASSCFG[" + RunningClass + "]", "PRIORITY=1000000"})
}

// sitePolicy reads a site maui.cfg and returns the lines to keep and the
// distinct keys dropped.
func sitePolicy(r io.Reader) (kept []string, dropped []string, err error) {
	ls, err := lines(r)
	if err != nil {
		return nil, nil, fmt.Errorf("site maui.cfg: %w", err)
	}
	drop := map[string]bool{}
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		key := strings.ToUpper(f[0])
		base, _, _ := strings.Cut(key, "[")
		switch {
		case simOwned[base] || strings.HasPrefix(base, "SIM") || strings.HasSuffix(base, "WEIGHT"):
			drop[base] = true
		case credLines[base]:
			if kl := stripPriorities(f); kl != "" {
				kept = append(kept, kl)
			}
		case base == "JOBNODEMATCHPOLICY":
			// EXACTNODE is applied when the traces are written (node
			// counts as the live PBS interface derives them); in Maui's
			// trace reader it would set node count = task count.
			if kl := withoutExactNode(f); kl != "" {
				kept = append(kept, kl)
			} else {
				drop[base] = true
			}
		default:
			kept = append(kept, t)
		}
	}
	for k := range drop {
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	return kept, dropped, nil
}

// SiteExactNode reports whether a site maui.cfg sets JOBNODEMATCHPOLICY
// EXACTNODE (Maui matches values by substring: MPar.c).
func SiteExactNode(site []byte) bool {
	ls, err := lines(bytes.NewReader(site))
	if err != nil {
		return false
	}
	for _, l := range ls {
		f := strings.Fields(l)
		if len(f) > 1 && strings.EqualFold(f[0], "JOBNODEMATCHPOLICY") && strings.Contains(strings.Join(f[1:], " "), "EXACTNODE") {
			return true
		}
	}
	return false
}

func withoutExactNode(f []string) string {
	out := []string{f[0]}
	for _, v := range f[1:] {
		if !strings.Contains(v, "EXACTNODE") {
			out = append(out, v)
		}
	}
	if len(out) == 1 {
		return ""
	}
	return strings.Join(out, " ")
}

func stripPriorities(f []string) string {
	out := []string{f[0]}
	for _, a := range f[1:] {
		skip := false
		for _, p := range priorityAttrs {
			if strings.HasPrefix(strings.ToUpper(a), p) {
				skip = true
			}
		}
		if !skip {
			out = append(out, a)
		}
	}
	if len(out) == 1 {
		return ""
	}
	return strings.Join(out, " ")
}
