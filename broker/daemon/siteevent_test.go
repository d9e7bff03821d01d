package daemon

import (
	"testing"

	"lookahead/broker"
	"lookahead/wire"
)

// A site's report that a part ended carries where its output is (found
// by the site after the part ended): the recorded part takes those paths,
// so `lookahead status` shows them instead of the -o/-e paths dispatched.
func TestPartEndedEventCarriesWhereTheOutputIs(t *testing.T) {
	j := &broker.Job{State: wire.JobRunning, Parts: map[string]*wire.PartStatus{"vm": {Site: "vm", State: wire.PartStarted,
		Output: "/home/alice/la.d1.0.out", Error: "/home/alice/la.d1.0.err"}}}
	zero := 0
	e, ok := siteEvent(j, "vm", wire.JobEvent{Type: wire.TypeJobEvent, Job: "d1", State: broker.SiteFinished, LocalID: "40.vm",
		End: 100, ExitStatus: &zero, Output: "/home/alice/.pbs_spool/40.vm.OU", Error: "/home/alice/.pbs_spool/40.vm.ER",
		Message: "stdout not delivered to /home/alice/la.d1.0.out: pbs_mom left it at /home/alice/.pbs_spool/40.vm.OU"}, 100)
	if !ok || e.Part == nil || e.Part.Output != "/home/alice/.pbs_spool/40.vm.OU" || e.Part.Error != "/home/alice/.pbs_spool/40.vm.ER" {
		t.Fatalf("event %+v %v", e, ok)
	}
}
