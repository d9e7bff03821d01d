package maui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// qsubAs submits `sleep secs` as user through su (Torque 6.1.3's qsub
// reads the script from stdin) and returns the job id.
func qsubAs(t *testing.T, user, name string, procs int, wall, secs int64, extra []string) string {
	t.Helper()
	args := append(append([]string{}, extra...), "-N", name, "-l", fmt.Sprintf("nodes=1:ppn=%d,walltime=%s", procs, FormatDuration(wall)))
	cmd := fmt.Sprintf("echo 'sleep %d' | /usr/local/bin/qsub %s", secs, strings.Join(args, " "))
	out, err := exec.Command("su", "-", user, "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("qsub as %s: %v: %s", user, err, out)
	}
	return strings.TrimSpace(string(out))
}

// jobStates reads qstat's one-letter states of ids.
func jobStates(t *testing.T, ids ...string) map[string]string {
	out, err := exec.Command("/usr/local/bin/qstat", ids...).CombinedOutput()
	if err != nil {
		t.Logf("qstat: %v: %s", err, out)
	}
	st := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		for _, id := range ids {
			if len(f) >= 6 && (f[0] == id || strings.HasPrefix(id, f[0])) {
				st[id] = f[4]
			}
		}
	}
	return st
}

// TestLiveBindingAndSlack proves on the live site what Maui 3.3.1
// enforces: a grid reservation made by Reserve admits only jobs submitted
// with QsubArgs by its user. The node is reserved whole by two grid jobs
// from start on; alice's own jobs (no account, her identity account) and
// bob's job charged to the binding account must not start inside; each
// grid part, submitted 30 s after the start with the requested walltime,
// runs in the reservation made with slack (end = start + walltime + 120 s)
// and not in the one made without (Maui: the walltime must fit in what is
// left). LOOKAHEAD_MAUI_CAPTURE=dir keeps the Maui outputs and log lines.
func TestLiveBindingAndSlack(t *testing.T) {
	base, node, procs := liveSite(t)
	capDir := os.Getenv("LOOKAHEAD_MAUI_CAPTURE")
	r := &captureRunner{r: base, dir: capDir}
	c := NewClient(r, ClientConfig{Capacity: map[string]int{node: procs}})
	ctx := context.Background()
	var jobs []string
	defer func() {
		if len(jobs) > 0 {
			_ = exec.Command("/usr/local/bin/qdel", jobs...).Run()
		}
		_, _ = c.Release(ctx, "maui-b1")
		_, _ = c.Release(ctx, "maui-b2")
	}()
	const wall, slack = 180, 120
	start := time.Now().Unix() + 40
	half := procs / 2
	mk := func(job string, end int64) Reservation {
		res, err := c.Reserve(ctx, ReserveRequest{Job: job, Start: start, End: end, User: "alice", Account: "proj1",
			Hosts: []forecast.HostProcs{{Node: node, Procs: half}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	withSlack, without := mk("maui-b1", start+wall+slack), mk("maui-b2", start+wall)
	outsiders := []string{
		qsubAs(t, "alice", "maui-own", 2, 120, 60, nil),
		qsubAs(t, "alice", "maui-own-acct", 2, 120, 60, []string{"-A", "proj1"}),
		qsubAs(t, "bob", "maui-imposter", 2, 120, 60, []string{"-A", withSlack.Bind}),
	}
	jobs = append(jobs, outsiders...)
	time.Sleep(time.Until(time.Unix(start+30, 0)))
	late := []string{
		qsubAs(t, "alice", "maui-part-slack", half, wall, 60, withSlack.Qsub),
		qsubAs(t, "alice", "maui-part-noslack", half, wall, 60, without.Qsub),
	}
	jobs = append(jobs, late...)
	time.Sleep(35 * time.Second)
	st := jobStates(t, jobs...)
	t.Logf("states %v (outsiders %v, parts %v)", st, outsiders, late)
	for _, id := range outsiders {
		if st[id] != "Q" {
			t.Errorf("job %s outside the grid job is %q inside its reservation, want Q", id, st[id])
		}
	}
	if st[late[0]] != "R" {
		t.Errorf("late part %s in the reservation with slack is %q, want R", late[0], st[late[0]])
	}
	if st[late[1]] != "Q" {
		t.Errorf("late part %s in the reservation without slack is %q, want Q (Maui: walltime exceeds what is left)", late[1], st[late[1]])
	}
	liveEvidence(t, r, capDir, append(outsiders, late...))
}

// liveEvidence records showres -n, diagnose -r, checkjob of each job and
// the Maui log lines naming them.
func liveEvidence(t *testing.T, r Runner, dir string, jobs []string) {
	ctx := context.Background()
	_, _ = r.Run(ctx, "showres", "-n")
	_, _ = r.Run(ctx, "diagnose", "-r")
	for _, id := range jobs {
		short, _, _ := strings.Cut(id, ".")
		_, _ = r.Run(ctx, "checkjob", short)
	}
	if dir == "" {
		return
	}
	log, err := os.ReadFile(filepath.Join(envOr("LOOKAHEAD_MAUI_HOME", "/var/spool/maui"), "log", "maui.log"))
	if err != nil {
		t.Logf("maui.log: %v", err)
		return
	}
	var keep []string
	for _, l := range strings.Split(string(log), "\n") {
		for _, id := range jobs {
			short, _, _ := strings.Cut(id, ".")
			if strings.Contains(l, "'"+short+"'") || strings.Contains(l, "("+short+",") || strings.Contains(l, "("+short+")") ||
				strings.Contains(l, "job "+short+" ") {
				keep = append(keep, l)
				break
			}
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "maui.log.lines"), []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}
