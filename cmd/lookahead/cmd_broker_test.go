package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/wire"
)

// Issue 12.9: audit --repair exited 0 when a repair was refused.
func TestAuditExitCodes(t *testing.T) {
	f := func(code string) wire.AuditFinding {
		return wire.AuditFinding{Kind: wire.DriftMissing, Site: "alpha", Job: "g1", RepairCode: code}
	}
	for _, c := range []struct {
		name   string
		rep    wire.AuditReport
		repair bool
		want   int
	}{
		{"clean", wire.AuditReport{}, false, cli.ExitOK},
		{"findings", wire.AuditReport{Findings: []wire.AuditFinding{f("")}}, false, cli.ExitRefused},
		{"unanswered", wire.AuditReport{Errors: []string{"beta: timeout"}}, false, cli.ExitRefused},
		{"all repaired", wire.AuditReport{Findings: []wire.AuditFinding{f(wire.RepairDone), f(wire.RepairDone)}}, true, cli.ExitOK},
		{"repair refused", wire.AuditReport{Findings: []wire.AuditFinding{f(wire.RepairDone), f(wire.RepairRefused)}}, true, cli.ExitRefused},
		{"drifted, reported", wire.AuditReport{Findings: []wire.AuditFinding{f(wire.RepairReported)}}, true, cli.ExitRefused},
		{"older broker, no code", wire.AuditReport{Findings: []wire.AuditFinding{f("")}}, true, cli.ExitRefused},
		{"repair failed", wire.AuditReport{Findings: []wire.AuditFinding{f(wire.RepairRefused), f(wire.RepairFailed)}}, true, cli.ExitFailure},
		// Issue 22.2: "no answer: alpha" with --repair exited 0 live.
		{"repaired but a site silent", wire.AuditReport{Findings: []wire.AuditFinding{f(wire.RepairDone)}, Errors: []string{"beta"}}, true, cli.ExitFailure},
		{"repair, a site silent, nothing found", wire.AuditReport{Errors: []string{"alpha: nats: no responders available for request"}}, true, cli.ExitFailure},
	} {
		if got := cli.ExitCode(auditOutcome(c.rep, c.repair)); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}

// Issue 15.4: a site's record claiming the broker's (or another site's)
// origin is shown as the site's, marked.
func TestAuditLogShowsTheSubjectsOrigin(t *testing.T) {
	recs := []wire.AuditRecord{
		{Time: 1, Origin: "broker", Action: "commit", Job: "g2", Site: "beta", Code: "ok", Message: "forged"},
		{Time: 2, Origin: "alpha", Action: "reserve", Job: "g2", Site: "alpha", Code: "ok"},
	}
	client.TrustSubject(wire.AuditSubject("alpha", "commit"), &recs[0])
	client.TrustSubject(wire.AuditSubject("alpha", "reserve"), &recs[1])
	if recs[0].Origin != "alpha" || recs[0].Site != "alpha" || !strings.Contains(recs[0].Mismatch, `origin "broker"`) ||
		!strings.Contains(recs[0].Mismatch, `site "beta"`) || recs[1].Mismatch != "" {
		t.Fatalf("records %+v", recs)
	}
	var out bytes.Buffer
	if err := writeAuditLog(&out, recs, 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[1], "alpha*") || strings.Contains(lines[1], "broker ") || !strings.Contains(out.String(), "1 records whose body disagrees") {
		t.Fatalf("audit log:\n%s", out.String())
	}
	if f := (client.LogFilter{Site: "beta"}); f.Match(recs[0]) {
		t.Fatal("alpha's forged record matches --site beta")
	}
}

// Issue 12.12: --max-price 1e308 is refused before anything is sent.
func TestSubmitRefusesNonFiniteWorstCase(t *testing.T) {
	out, code := run(t, "submit", "--procs", "8", "--walltime", "10h", "--max-price", "1e308", "--nats-url", "nats://127.0.0.1:1")
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d: %s", code, cli.ExitUsage, out)
	}
}

// Issue 12.12: plan -o json failed on a +Inf cost. Since issue 23.1 the
// prices that made it (a slot at 1e307, a max_price of 1e308) are past the
// model's limits and the files are refused, naming the field; at the
// limits the cost is finite.
func TestPlanJSONWithOverflowingCost(t *testing.T) {
	dir := t.TempDir()
	fc := forecast.Forecast{Version: 1, Site: "alpha", Generated: 1000, Horizon: 1 << 30,
		Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}},
		Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 1000, End: 1 << 30, Price: 1e307}}}
	jobs := []forecast.JobRequest{{ID: "g1", Procs: 8, Walltime: 36000, MaxPrice: forecast.MaxPrice}}
	write := func(name string, v any) string {
		data, _ := json.Marshal(v)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opts := planOptions{forecasts: []string{write("f.json", fc)}, jobs: write("q.json", jobs), output: cli.FormatJSON}
	var out bytes.Buffer
	if err := runPlan(context.Background(), opts, nil, &out); cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "slots[0].price") {
		t.Fatalf("plan of a slot priced 1e307: %v, want exit 2 naming slots[0].price", err)
	}
	fc.Slots[0].Price = forecast.MaxPrice
	opts.forecasts = []string{write("f.json", fc)}
	if err := runPlan(context.Background(), opts, nil, &out); err != nil {
		t.Fatalf("plan -o json: %v", err)
	}
	var allocs []forecast.Allocation
	if err := json.Unmarshal(out.Bytes(), &allocs); err != nil || len(allocs) != 1 || !allocs[0].Placed() || math.IsInf(allocs[0].Cost, 0) {
		t.Fatalf("allocations %s (%v)", out.String(), err)
	}
}

func TestSitesShowsExcludedAndWhy(t *testing.T) {
	var out bytes.Buffer
	err := writeSites(&out, wire.SitesReply{Now: 1000, Sites: []wire.SiteStatus{
		{Site: "alpha", Seq: 7, Stale: true, Excluded: true, Problem: "forecast refused: nodes[0].procs: 1000000000000000000, at most 16777216 supported"},
		{Site: "beta", Seq: 2, ClockOffset: -90},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "EXCLUDED") || !strings.Contains(s, "at most 16777216") || !strings.Contains(s, "-1m") {
		t.Fatalf("sites:\n%s", s)
	}
}

// A site that does not answer requests shows SILENT with why and since
// when; a site never heard shows "never", not the time since 1970.
func TestSitesShowsSilentAndNever(t *testing.T) {
	var out bytes.Buffer
	err := writeSites(&out, wire.SitesReply{Now: 1_800_000_000, Sites: []wire.SiteStatus{
		{Site: "alpha", Seq: 3, LastSeen: 1_800_000_000 - 20, Age: 20, Stale: true, Excluded: true,
			Unanswered: "does not answer reserve/release requests: reserve g1: nats: no responders available for request", UnansweredSince: 1_800_000_000 - 90},
		{Site: "gamma", Stale: true, Excluded: true, Problem: "forecast refused: bad"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"SILENT", "no responders", "for 1m30s: does not answer", "20s ago", "never", "EXCLUDED"} {
		if !strings.Contains(s, want) {
			t.Fatalf("sites output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "20833d") {
		t.Fatalf("a never-heard site shows an age since 1970:\n%s", s)
	}
}

// Durations are shown exactly: a 90 s walltime is 1m30s, not 1m; in the
// one format of every binary (hours at most: 100h, not 4d4h).
func TestFmtDurIsExact(t *testing.T) {
	for s, want := range map[int64]string{45: "45s", 60: "1m", 90: "1m30s", 3600: "1h", 7507: "2h05m07s",
		3*86400 + 4*3600: "76h", 3*86400 + 4*3600 + 300: "76h05m"} {
		if got := fmtDur(s); got != want {
			t.Errorf("fmtDur(%d) = %q, want %q", s, got, want)
		}
	}
}
