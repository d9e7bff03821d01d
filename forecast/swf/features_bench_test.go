package swf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"lookahead/forecast/sim"
	"lookahead/internal/cputime"
)

// featureCfgs are the maui.cfg settings BenchmarkPolicyFeatures measures,
// each added to featureBase (Maui's defaults with MINRESOURCE): usage
// limits on every user and group, fairshare by user, a daily standing
// reservation on 32 nodes (%s: their names) and QOS priorities.
var featureCfgs = []struct{ name, cfg string }{
	{"limits", "USERCFG[DEFAULT] MAXJOB=4\nGROUPCFG[DEFAULT] MAXPROC=128\n"},
	{"fairshare", "FSPOLICY DEDICATEDPS\nFSINTERVAL 24:00:00\nFSDEPTH 7\nFSDECAY 0.8\nFSUSERWEIGHT 10\nUSERCFG[DEFAULT] FSTARGET=5\n"},
	{"standing", "SRCFG[maint] PERIOD=DAY STARTTIME=02:00:00 ENDTIME=06:00:00\nSRCFG[maint] HOSTLIST=%s\n"},
	{"qos", "QOSWEIGHT 1\nQOSCFG[hi] PRIORITY=400\nQOSCFG[DEFAULT] PRIORITY=50\nUSERCFG[DEFAULT] QLIST=DEFAULT,hi QDEF=DEFAULT\nCLASSCFG[1] QDEF=hi\n"},
	{"all", ""},
}

const featureBase = "RESERVATIONDEPTH 1\nBACKFILLPOLICY FIRSTFIT\nNODEALLOCATIONPOLICY MINRESOURCE\n"

// BenchmarkPolicyFeatures is the cost of each site-policy feature when
// used: the first LOOKAHEAD_BENCH_JOBS (default 20,000) jobs of the CTC
// trace (from ../shared/traces or $LOOKAHEAD_TRACES; skipped when absent)
// on its 338 one-processor nodes under maui.cfg with the feature, each
// replay alternating with one without it in the same run. x-base is the
// CPU ratio of the two.
func BenchmarkPolicyFeatures(b *testing.B) {
	tr := loadShared(b, "CTC-SP2-1996-3.1-cln.swf.gz")
	jobs := tr.SimJobs()
	if n, err := strconv.Atoi(os.Getenv("LOOKAHEAD_BENCH_JOBS")); err == nil && n > 0 && n < len(jobs) {
		jobs = jobs[:n]
	} else if err != nil {
		jobs = jobs[:min(20000, len(jobs))]
	}
	c := sim.PoolCluster(tr.Header.MaxProcs)
	var hosts []string
	for _, n := range c.Nodes[:32] {
		hosts = append(hosts, n.Name)
	}
	base := featurePolicy(b, featureBase)
	var all strings.Builder
	for _, f := range featureCfgs {
		cfg := f.cfg
		if f.name == "all" {
			cfg = all.String()
		} else {
			if strings.Contains(cfg, "%s") {
				cfg = fmt.Sprintf(cfg, strings.Join(hosts, ","))
			}
			all.WriteString(cfg)
		}
		pol := featurePolicy(b, featureBase+cfg)
		b.Run(f.name, func(b *testing.B) {
			var with, without float64
			for b.Loop() {
				t0 := cputime.Used()
				if _, err := sim.RunWith(c, jobs, base, sim.Options{}); err != nil {
					b.Fatal(err)
				}
				t1 := cputime.Used()
				if _, err := sim.RunWith(c, jobs, pol, sim.Options{}); err != nil {
					b.Fatal(err)
				}
				without += (t1 - t0).Seconds()
				with += (cputime.Used() - t1).Seconds()
			}
			b.ReportMetric(with*1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(without*1000/float64(b.N), "base-cpu-ms/op")
			if without > 0 {
				b.ReportMetric(with/without, "x-base")
			}
		})
	}
}

func featurePolicy(b *testing.B, cfg string) sim.Policy {
	b.Helper()
	mc, err := sim.ReadMauiConfig(strings.NewReader(cfg))
	if err != nil {
		b.Fatalf("maui.cfg %q: %v", cfg, err)
	}
	return mc.Policy
}
