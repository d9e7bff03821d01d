package main

import (
	"errors"
	"fmt"
	"slices"

	"lookahead/agent"
)

// checkDispatchUsers looks up every local user dispatch.users maps a
// grid user to, as the agent does at each reserve and dispatch: through
// the system's NSS (getent passwd: LDAP, SSSD and other directories, as
// pbs_mom and slurmd see them), with a uid of at least dispatch.min_uid.
// A missing one fails the first job of that grid user ("does not exist
// here"; on a Slurm site slurmctld's own answer, "Invalid user id", reads
// as a permission problem).
func checkDispatchUsers(c Config, lookup agent.UserLookup) []checkResult {
	grid := make([]string, 0, len(c.Dispatch.Users))
	for g := range c.Dispatch.Users {
		grid = append(grid, g)
	}
	slices.Sort(grid)
	out := make([]checkResult, 0, len(grid))
	for _, g := range grid {
		local := c.Dispatch.Users[g]
		name := fmt.Sprintf("dispatch user %s", g)
		u, err := lookup(local)
		switch {
		case errors.Is(err, agent.ErrUserLookup):
			out = append(out, checkResult{Name: name, Detail: fmt.Sprintf("→ %s: %v", local, err),
				Fix: "getent passwd " + local + " must answer on this host (is the directory service, e.g. sssd, running?)"})
		case err != nil:
			out = append(out, checkResult{Name: name, Detail: fmt.Sprintf("→ %s: no such user on this host (%v)", local, err),
				Fix: fmt.Sprintf("create %s (in /etc/passwd or the site's directory: getent passwd %s must find it), or map %s to an existing user in dispatch.users", local, local, g)})
		case u.UID < c.Dispatch.MinUID:
			out = append(out, checkResult{Name: name, Detail: fmt.Sprintf("→ %s: uid %d, below dispatch.min_uid %d: refused", local, u.UID, c.Dispatch.MinUID),
				Fix: fmt.Sprintf("map %s to a user with a uid of at least %d; root and system users never run parts", g, c.Dispatch.MinUID)})
		default:
			out = append(out, checkResult{Name: name, OK: true, Detail: fmt.Sprintf("→ %s (uid %d, home %s)", local, u.UID, u.Home)})
		}
	}
	return out
}
