package sim

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInspectMauiReference replays a stored reference workload in a real
// Maui, shifted in time, stops at the first event at or after an offset
// from the workload's first arrival and prints Maui's view there
// (reservations, priorities, nodes; LOOKAHEAD_MAUI_CHECKNODE="n001 n002"
// adds checknode for those): the tool for finding why the simulator and
// Maui part. Skipped unless LOOKAHEAD_MAUI_BIN is set and
// LOOKAHEAD_MAUI_INSPECT=<scenario>:<offset seconds>.
func TestInspectMauiReference(t *testing.T) {
	bin, spec := os.Getenv("LOOKAHEAD_MAUI_BIN"), os.Getenv("LOOKAHEAD_MAUI_INSPECT")
	if bin == "" || spec == "" {
		t.Skip("LOOKAHEAD_MAUI_BIN and LOOKAHEAD_MAUI_INSPECT not set")
	}
	name, off, _ := strings.Cut(spec, ":")
	offset, err := strconv.ParseInt(off, 10, 64)
	must(t, err)
	dir := filepath.Join("testdata", "mauiref", name)
	jobs := readRefWorkload(t, filepath.Join(dir, "workload.trace.gz"))
	cfg, err := os.ReadFile(filepath.Join(dir, "maui.cfg"))
	must(t, err)
	shift := time.Now().Unix() + 60 - jobs[1].submit
	if strings.Contains(string(cfg), "SRCFG") {
		shift = (shift + weekLen - 1) / weekLen * weekLen // the windows sit on the wall clock
	} else if p := refEdgePeriod(t, string(cfg)); p > 0 {
		shift += p - shift%p // wall-clock edges keep their place in the workload
	}
	for i := range jobs {
		jobs[i].submit += shift
	}
	home := t.TempDir()
	if h := os.Getenv("LOOKAHEAD_MAUI_HOME"); h != "" {
		home = h // kept afterwards, with Maui's log
		must(t, os.RemoveAll(h))
	}
	for _, d := range []string{"traces", "stats", "log"} {
		must(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	res, err := os.ReadFile(filepath.Join(dir, "resource.trace"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(home, "traces", "resource.trace"), res, 0o644))
	must(t, os.WriteFile(filepath.Join(home, "traces", "workload.trace"), workloadTrace(jobs), 0o644))
	policy := policyLines(string(cfg))
	if l := os.Getenv("LOOKAHEAD_MAUI_LOGLEVEL"); l != "" {
		policy += "LOGLEVEL " + l + "\nLOGFILEMAXSIZE 1000000000\n"
	}
	refs := make([]refJob, len(jobs))
	for i, j := range jobs {
		refs[i] = refJob{name: j.name, submit: j.submit, runtime: j.runtime}
	}
	r := &refRun{bin: bin, home: home, edge: refEdges(t, string(cfg)), zone: refZone(t, dir)}
	r.edges, err = standingEdges(policy, time.Now().Unix(), jobs[len(jobs)-1].submit+30*86400, r.zone) // from Maui's clock's start, so that it rolls its windows every
	must(t, err)
	ctx := context.Background()
	must(t, r.start(ctx, policy, 1))
	defer r.stop()
	inspect := func(at int64) {
		t.Logf("paused at workload +%d s", at-jobs[1].submit)
		cmds := [][]string{{"showq"}, {"showres"}, {"showres", "-n"}, {"diagnose", "-p"}}
		for _, n := range strings.Fields(os.Getenv("LOOKAHEAD_MAUI_CHECKNODE")) {
			cmds = append(cmds, []string{"checknode", n}) // e.g. "n045 n048"
		}
		for _, c := range cmds {
			out, err := r.client(ctx, c...)
			t.Logf("%v: %v\n%s", c, err, out)
		}
	}
	if _, err := r.drive(ctx, refs, jobs[1].submit+offset, inspect, t.Logf); err != nil {
		t.Fatal(err)
	}
}

// policyLines drops the simulation's own lines (SERVER*, SIM*, ADMIN,
// LOG*, STATDIR, RMPOLLINTERVAL) from a reference maui.cfg.
func policyLines(cfg string) string {
	var b strings.Builder
	for _, l := range strings.Split(cfg, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch k := strings.ToUpper(f[0]); {
		case strings.HasPrefix(k, "SERVER"), strings.HasPrefix(k, "SIM"), strings.HasPrefix(k, "LOG"),
			strings.HasPrefix(k, "ADMIN"), k == "STATDIR", k == "RMPOLLINTERVAL":
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// readRefWorkload reads a generated workload trace back.
func readRefWorkload(t testing.TB, path string) []refTraceJob {
	var out []refTraceJob
	for _, f := range readTraceFields(t, path) {
		num := func(i int) int64 { return parseField(t, path, f, i) }
		class, _, _ := strings.Cut(strings.Trim(f[7], "[]"), ":")
		j := refTraceJob{name: f[0], user: f[3], group: f[4], account: f[25], class: class,
			tasks: int(num(2)), tpn: int(num(22)), wall: num(5), submit: num(8), runtime: num(11) - num(10)}
		if q, _, _ := strings.Cut(f[23], ":"); q != "[DEFAULT]" && q != "[NONE]" {
			j.qos = q // the QOS the job asks for
		}
		j.feats = strings.Join(traceFeatures(f[19]), ":")
		out = append(out, j)
	}
	return out
}
