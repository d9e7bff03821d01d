package maui

import (
	"strconv"
	"strings"
)

// How a grid job's reservations admit its parts and nothing else.
//
// Maui 3.3.1 (MACLCheckAccess, src/moab/MACL.c) grants a job access to a
// reservation when every ACL entry flagged required ('*' after the name)
// matches one of the job's credentials and at least one entry without a
// flag matches too: plain entries are an OR ("USER==alice+ ACCT==proj1+"
// admits every job of alice and every job charged to proj1). setres loads
// -u/-g/-a lists with that syntax ("alice*", "a,b*"); setres -x flags
// (BYNAME) are ignored by 3.3.1 and mresctl is not implemented.
//
// So each grid job gets a binding account from a small pool
// ("<prefix>acct<N>", e.g. "la.acct0"), unique among the reservations and
// local jobs alive on the site, and its reservations are made with
//
//	-u USER* [-g GROUP*] -a [ACCOUNT,]BIND*,BIND
//
// USER, GROUP and BIND are required; the plain BIND satisfies the "one
// plain entry" rule; the plain ACCOUNT (the identity's own) is inert and
// only records the identity. A part submitted as USER with `-A BIND` (and
// the group when one is bound) gets in; alice's other jobs, whatever their
// account, and other users' jobs with `-A BIND` do not. Accounts come from
// a pool rather than one per grid job because Maui never forgets an
// account: its table holds 1,024+768 (MAX_MACCT + MAX_MHBUF) and is
// checkpointed across restarts. Torque takes any -A string unless built
// with its PNOT account patch.

// bindPrefix is what every binding account starts with.
func (c *Client) bindPrefix() string { return c.cfg.Prefix + "acct" }

// IsBindAccount reports whether account is one of the binding pool's.
func (c *Client) IsBindAccount(account string) bool {
	rest, ok := strings.CutPrefix(account, c.bindPrefix())
	return ok && isDigits(rest)
}

// keepBind reports whether req's own binding account may be used again:
// a pool account that no other grid job's reservation is bound to (a job
// reservation of the job's part, charged to it, does not count).
func (c *Client) keepBind(st *resState, req ReserveRequest) bool {
	if !c.IsBindAccount(req.Bind) {
		return false
	}
	for _, r := range st.rows {
		job, ours := c.JobOf(r.ID)
		if !ours || r.Type != "User" || job == req.Job {
			continue
		}
		if _, _, _, b := aclIdentity(st.diag[r.ID]); MadeName(b) == req.Bind {
			return false
		}
	}
	return true
}

// pickBind returns the first pool account not in use.
func (c *Client) pickBind(inUse map[string]bool) string {
	for n := 0; ; n++ {
		if a := c.bindPrefix() + strconv.Itoa(n); !inUse[a] {
			return a
		}
	}
}

// bindsInUse collects the accounts a new binding must not take: every
// account named in any reservation's ACL or credential list (Maui's job
// reservations carry their job's ACCT; a restarted Maui's restored ACL
// names "la.acct0+" for la.acct0) and those given by the caller (local
// jobs' accounts from a snapshot, the accounts of grid reservations the
// caller holds that Maui lost).
func (st *resState) bindsInUse(extra []string) map[string]bool {
	used := map[string]bool{}
	for _, d := range st.diag {
		for _, e := range append(append([]ACLEntry{}, d.ACL...), d.CL...) {
			if e.Type == "ACCT" {
				used[MadeName(e.Name)] = true
			}
		}
	}
	for _, a := range extra {
		used[a] = true
	}
	return used
}

// aclIdentity reads a reservation's identity and binding from its ACL:
// the binding account is the required ACCT entry; the identity's account
// the plain ACCT entry that is not the binding. Reservations made before
// binding (all entries plain) have no binding account.
func aclIdentity(d ResDiag) (user, group, account, bind string) {
	for _, e := range d.ACL {
		switch {
		case e.Type == "USER" && user == "":
			user = e.Name
		case e.Type == "GROUP" && group == "":
			group = e.Name
		case e.Type == "ACCT" && e.Required() && bind == "":
			bind = e.Name
		}
	}
	for _, e := range d.ACL {
		if e.Type == "ACCT" && !e.Required() && e.Name != bind {
			return user, group, e.Name, bind
		}
	}
	return user, group, "", bind
}

// aclArgs are setres' ACL options for a request bound to bind.
func aclArgs(req ReserveRequest, bind string) []string {
	var args []string
	if req.User != "" {
		args = append(args, "-u", req.User+"*")
	}
	if req.Group != "" {
		args = append(args, "-g", req.Group+"*")
	}
	accts := []string{bind + "*", bind}
	if req.Account != "" {
		accts = append([]string{req.Account}, accts...)
	}
	return append(args, "-a", strings.Join(accts, ","))
}

// QsubArgs is what a grid job's part must be submitted with to run inside
// its reservations — the one place these options are made: the binding
// account (-A), the bound group (-W group_list) and, when the hold is one
// reservation, -W x=FLAGS:ADVRES:<id> (a job names at most one
// reservation; with several, the binding account alone admits it to each).
// The part runs as the reservation's user. A reservation without a binding
// (made before it existed) falls back to its identity account.
func QsubArgs(r Reservation) []string {
	var out []string
	if acct := orDefault(r.Bind, r.Account); acct != "" {
		out = append(out, "-A", acct)
	}
	var w []string
	if r.Bind != "" && r.Group != "" {
		w = append(w, "group_list="+r.Group)
	}
	if len(r.IDs) == 1 {
		w = append(w, "x=FLAGS:ADVRES:"+r.IDs[0])
	}
	if len(w) > 0 {
		out = append(out, "-W", strings.Join(w, ","))
	}
	return out
}
