package broker

import (
	"testing"

	"lookahead/wire"
)

// On a loaded machine a site's "started" event can reach the broker before
// its answer to the dispatch: the part is then running, and the answer
// still brings what only it carries — the local user and the output
// paths — without moving the part back (issue 23.12: the demo lost its
// dispatch line this way under -cpu 1 and load).
func TestDispatchAnswerAfterThePartStarted(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, partEvent("a", SiteStarted, 101, nil))
	if p := j.Parts["a"]; p.State != wire.PartStarted || p.LocalUser != "" {
		t.Fatalf("setup: %+v", p)
	}
	mustApply(t, s, dispatched("a", "a-7"))
	p := j.Parts["a"]
	if p.State != wire.PartStarted || p.LocalID != "a-7" || p.LocalUser != "alice" || p.Output != "vm:/home/alice/la.g1.out" || p.Start != 101 {
		t.Fatalf("part after the late answer: %+v", p)
	}
	// a refusal arriving late changes nothing
	mustApply(t, s, Event{Kind: EvDispatched, Time: 23, Job: "g1", Site: "a", State: wire.PartFailed, Part: &wire.PartStatus{}, Message: "refused"})
	if p := j.Parts["a"]; p.State != wire.PartStarted || p.LocalUser != "alice" {
		t.Fatalf("part after a late refusal: %+v", p)
	}
}
