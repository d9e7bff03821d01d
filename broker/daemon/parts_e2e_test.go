package daemon

import (
	"context"
	"strings"
	"testing"

	"lookahead/wire"
)

// Two simulated sites with real agents over an embedded NATS server:
// alpha's agent does not run parts (no dispatch configured), beta's does.
// A job with a script goes to beta and is dispatched there; one without a
// script still uses alpha; a job with a script that only alpha could
// hold is refused at submit, saying why. The broker's
// sites show what each agent says. Without the sites saying so, the job
// with a script was planned on alpha, reserved, and failed at dispatch.
func TestScriptJobLandsOnTheSiteThatRunsParts(t *testing.T) {
	e := newEnv(t)
	e.startAgent("alpha", 6)
	e.startDispatchAgent("beta", 4)
	r := e.startBroker(func(cfg *Config) { cfg.UsePlanner(NewPlanner(PlannerOptions{})) }) // it plans on requirements
	e.waitSites(r.b, 2)
	for _, s := range r.b.Sites().Sites {
		if s.RunsParts == nil || *s.RunsParts != (s.Site == "beta") {
			t.Fatalf("site %s: runs_parts %v", s.Site, s.RunsParts)
		}
	}
	one := job(40, 3600, 2)
	one.MaxSites = 1 // only alpha's 48 processors would hold it, beta has 32
	refused := r.b.Submit(context.Background(), "alice", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: "s0", Job: one, Script: []byte("#!/bin/sh\n")})
	if refused.Code != wire.CodeNoCapacity || !strings.Contains(refused.Message, "not (does not run parts: dispatch is off in its agent config): alpha") {
		t.Fatalf("a script job only alpha could hold: %+v", refused)
	}
	one.Procs = 16
	rep := submitScript(t, r.b, "s1", one, "#!/bin/sh\n#lookahead-sim runtime=600\n")
	wide := submit(t, r.b, "p1", job(64, 3600, 2)) // without a script: alpha's 48 and beta's other 16
	if wide.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", wide)
	}
	st := cycleUntil(t, r.b, rep.Job, wire.JobDispatched)
	if len(st.Parts) != 1 || st.Parts[0].Site != "beta" || st.Parts[0].State != wire.PartDispatched {
		t.Fatalf("the job with a script: %s %+v", st.Message, st.Parts)
	}
	if ps := status(t, r.b, wide.Job); ps.Plan == nil || strings.Join(ps.Plan.Sites(), ",") != "alpha,beta" || ps.Plan.Start != st.Plan.Start {
		t.Fatalf("the job without a script is planned %+v, want on alpha and beta at %d", ps.Plan, st.Plan.Start)
	}
}
