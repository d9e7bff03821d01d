package sim

import "lookahead/forecast"

// standingHolds holds, for the forecast's slots, every window of the
// policy's standing reservations over [now, horizon) on their nodes, not
// only the windows Maui has made so far (its depth): a grid job placed in
// a later window would meet it once Maui makes it. A window is held
// whatever its ACL: the grid's jobs are not known to be inside it.
func (b *builder) standingHolds() {
	sr := b.e.policy.Standing
	if sr == nil {
		return
	}
	for _, st := range b.e.srs {
		for _, w := range st.sr.Windows(b.now, b.horizon, sr.Zone) {
			for _, h := range st.hosts {
				b.holds = append(b.holds, forecast.Hold{Node: b.e.nodes[h.node].name, Procs: h.procs, Start: w[0], End: w[1]})
			}
		}
	}
}

// madeByPolicy reports whether the policy makes reservation r itself: a
// standing reservation's window in the snapshot, when the policy has the
// site's standing reservations.
func (b *builder) madeByPolicy(r forecast.Reservation) bool {
	return r.Standing && b.e.policy.Standing != nil
}
