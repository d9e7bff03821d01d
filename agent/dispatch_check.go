package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/torque"
	"lookahead/wire"
)

// CheckDispatch validates a dispatch request on its own, before anything
// about the cluster is read: message type, site, grid job id, part index
// within the parts, every part's site and nodes (plain names, counts > 0),
// the grid user (a plain name), the script (present, at most
// wire.MaxScriptBytes) and the walltime (> 0). Pure.
func CheckDispatch(req wire.DispatchRequest, site string) *Refusal {
	if r := checkHeader(req.Type, wire.TypeDispatch, req.Site, req.Job, req.RequestedBy, site); r != nil {
		return r
	}
	switch {
	case req.Part < 0 || req.Part >= len(req.Parts):
		return refuse(wire.CodeInvalid, "part %d: not one of the %d parts", req.Part, len(req.Parts))
	case req.Parts[req.Part].Site != site:
		return refuse(wire.CodeInvalid, "part %d is on %q, not on this site %q", req.Part, clip(req.Parts[req.Part].Site), site)
	case !forecast.IsPlainName(req.User) || reservedWord(req.User):
		return refuse(wire.CodeInvalid, "grid user %q: must be a plain name", clip(req.User))
	case req.Account != "" && !forecast.IsPlainName(req.Account):
		return refuse(wire.CodeInvalid, "account %q: must be a plain name", clip(req.Account))
	case len(req.Script) == 0:
		return refuse(wire.CodeInvalid, "no script")
	case len(req.Script) > wire.MaxScriptBytes:
		return refuse(wire.CodeInvalid, "script of %d bytes exceeds the limit of %d", len(req.Script), wire.MaxScriptBytes)
	case req.Walltime <= 0:
		return refuse(wire.CodeInvalid, "walltime %d: must be > 0 seconds", req.Walltime)
	}
	for _, p := range req.Parts {
		if !forecast.IsPlainName(p.Site) || len(p.Nodes) == 0 {
			return refuse(wire.CodeInvalid, "part on %q: a plain site name and at least one node", clip(p.Site))
		}
		for _, n := range p.Nodes {
			if !forecast.IsPlainName(n.Node) || n.Procs <= 0 {
				return refuse(wire.CodeInvalid, "part on %s: node %q × %d: a plain name and procs > 0", p.Site, clip(n.Node), n.Procs)
			}
		}
	}
	return nil
}

// MapUser decides the local account a grid user's parts run as: the
// configured mapping (or the same name), which must exist and have a uid
// of at least MinUID — never root nor a system user. Pure but for lookup.
func MapUser(cfg DispatchConfig, gridUser string, lookup UserLookup) (LocalUser, *Refusal) {
	name := gridUser
	if mapped, ok := cfg.Users[gridUser]; ok {
		name = mapped
	}
	if name == "root" {
		return LocalUser{}, refuse(wire.CodeForbidden, "grid user %s maps to root: refused", gridUser)
	}
	u, err := lookup(name)
	if errors.Is(err, ErrUserLookup) {
		return LocalUser{}, refuse(wire.CodeInternal, "grid user %s maps to local user %s, which this site cannot look up now: %v", gridUser, name, err)
	}
	if err != nil {
		return LocalUser{}, refuse(wire.CodeForbidden, "grid user %s maps to local user %s, which does not exist here (%v)", gridUser, name, err)
	}
	if u.UID < cfg.MinUID {
		return LocalUser{}, refuse(wire.CodeForbidden, "grid user %s maps to local user %s (uid %d): system users (uid < %d) and root are refused",
			gridUser, name, u.UID, cfg.MinUID)
	}
	return u, nil
}

// PartPlan is how one part is submitted, computed from the request, the
// part's reservation and the local account.
type PartPlan struct {
	Spec torque.QsubSpec
	// Cut is set when the walltime was shortened to leave StartSlack in
	// the reservation (the note for the reply).
	Cut string
}

// PlanPart builds the submission of req's part into reservation res at
// now for local user u: the exact nodes of the reservation, the walltime
// (req.Walltime, shortened if needed so that StartSlack of the
// reservation stays free after max(now, its start)), the reservation's
// binding options (res.Submit, made by the maui package), output paths
// and the LOOKAHEAD_* variables. A reservation too short for anything is
// a refusal. Pure.
func PlanPart(req wire.DispatchRequest, res wire.Reservation, u LocalUser, cfg DispatchConfig, now int64) (PartPlan, *Refusal) {
	if len(res.Nodes) == 0 {
		return PartPlan{}, refuse(wire.CodeNotFound, "reservation %s of job %s holds no nodes", res.ID, req.Job)
	}
	wall, cut := req.Walltime, ""
	left := res.End - max(now, res.Start) - int64(cfg.StartSlack.Seconds())
	if left <= 0 {
		return PartPlan{}, refuse(wire.CodeInPast, "reservation %s ends at %d: no time left to run part %d (now %d, slack %s)",
			res.ID, res.End, req.Part, now, durfmt.Duration(cfg.StartSlack))
	}
	if wall > left {
		wall, cut = left, fmt.Sprintf("walltime cut from %s to %s to leave %s of the reservation free", durfmt.Seconds(req.Walltime), durfmt.Seconds(left), durfmt.Duration(cfg.StartSlack))
	}
	dir := strings.NewReplacer("{home}", u.Home, "{user}", u.Name).Replace(cfg.OutputDir)
	name := wire.PartName(req.Job, req.Part)
	spec := torque.QsubSpec{User: u.Name, UID: u.UID, Name: name, Walltime: wall, Bind: bindOptions(res.Submit),
		Output: dir + "/" + name + ".out", Error: dir + "/" + name + ".err", Script: req.Script,
		Env: []torque.EnvVar{{Name: "LOOKAHEAD_JOB", Value: req.Job}, {Name: "LOOKAHEAD_SITE", Value: req.Site},
			{Name: "LOOKAHEAD_PART", Value: strconv.Itoa(req.Part)}, {Name: "LOOKAHEAD_PARTS", Value: wire.FormatParts(req.Parts)},
			{Name: "LOOKAHEAD_START", Value: strconv.FormatInt(res.Start, 10)}}}
	for _, n := range res.Nodes {
		spec.Nodes = append(spec.Nodes, forecast.HostProcs{Node: n.Node, Procs: n.Procs})
	}
	if _, err := torque.QsubArgs(spec); err != nil {
		return PartPlan{}, refuse(wire.CodeInvalid, "part %d of %s: %v", req.Part, req.Job, err)
	}
	return PartPlan{Spec: spec, Cut: cut}, nil
}

// CheckStop validates a stop request. Pure.
func CheckStop(req wire.StopRequest, site string) *Refusal {
	if r := checkHeader(req.Type, wire.TypeStop, req.Site, req.Job, req.RequestedBy, site); r != nil {
		return r
	}
	if len(req.Reason) > maxRequester || !printable(req.Reason) {
		return refuse(wire.CodeInvalid, "reason: at most %d printable characters", maxRequester)
	}
	return nil
}
