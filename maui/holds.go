package maui

import (
	"context"
	"slices"
	"sort"

	"lookahead/forecast"
)

// Hold is one user reservation of the site as a forecast must see it:
// processors nobody else may use over [Start, End). Lookahead's own carry
// their grid job (Reservation.Job) and the user and binding account a job
// runs inside them with (see QsubArgs); others (admins' setres, standing
// reservations) carry neither.
type Hold struct {
	Reservation forecast.Reservation
	User        string
	Bind        string
}

// Holds lists every user reservation Maui holds (showres, showres -n and
// diagnose -r), lookahead's own and foreign ones alike, with what each
// holds per node (diagnose -r's processors over its nodes, rounded up).
// Job reservations are not holds: running jobs are in the snapshot, idle
// jobs' are Maui's plans. Standing reservations (flag STANDINGRES) are
// marked; a Maui simulation that copies the site's SRCFG makes its own.
func (c *Client) Holds(ctx context.Context) ([]Hold, error) {
	st, err := c.state(ctx)
	if err != nil {
		return nil, err
	}
	dur := map[string]int64{}
	for _, r := range st.rows {
		dur[r.ID] = r.Duration
	}
	by := map[string]*Hold{}
	var order []string
	for _, n := range st.nodes {
		if n.Type != "User" {
			continue
		}
		h := by[n.ID]
		if h == nil {
			d := st.diag[n.ID]
			h = &Hold{Reservation: forecast.Reservation{ID: n.ID, Start: st.start[n.ID], End: st.start[n.ID] + dur[n.ID],
				Standing: slices.Contains(d.Flags, "STANDINGRES")}}
			if job, ok := c.JobOf(n.ID); ok {
				h.Reservation.Job = job
				h.User, _, _, h.Bind = aclIdentity(d)
			}
			by[n.ID] = h
			order = append(order, n.ID)
		}
		if p := perNode(st.diag[n.ID]); p > 0 && !hasNode(h.Reservation.Hosts, n.Node) {
			h.Reservation.Hosts = append(h.Reservation.Hosts, forecast.HostProcs{Node: n.Node, Procs: p})
		}
	}
	out := make([]Hold, 0, len(order))
	for _, id := range order {
		h := by[id]
		if len(h.Reservation.Hosts) == 0 || h.Reservation.End <= h.Reservation.Start {
			continue // nothing held (a reservation without processors)
		}
		sort.Slice(h.Reservation.Hosts, func(i, j int) bool { return h.Reservation.Hosts[i].Node < h.Reservation.Hosts[j].Node })
		out = append(out, *h)
	}
	return out, nil
}

func hasNode(hs []forecast.HostProcs, node string) bool {
	for _, h := range hs {
		if h.Node == node {
			return true
		}
	}
	return false
}
