package broker

import (
	"slices"
	"strings"

	"lookahead/forecast"
	"lookahead/wire"
)

// A job with a script has its parts dispatched by the broker, so it may be
// planned only on sites whose agent runs parts (forecast.TakesParts; an
// agent that does not say is taken as running them, docs/formats.md,
// "Sites that run parts"). The planner plans the whole queue on one pool
// of slots, so the restriction reaches it as a requirement of those jobs:
// in the planning input only, every node of the sites that run parts
// carries partsFeature and the jobs with a script ask for it. The planner
// (broker/coalloc) needs nothing else; the forecasts and jobs the broker
// keeps are not changed.
const partsFeature = "lookahead.runs-parts"

// noPartsNote says why sites were left out of a job with a script's plan.
const noPartsNote = "dispatch is off in its agent config"

// ForParts returns the forecasts and jobs to plan so that the jobs with a
// script (scripted) are placed only on the sites of fcs that take parts,
// and the sites that do not (sorted). When no waiting job has a script or
// every site takes parts, fcs and jobs come back as they are. The inputs
// are not changed.
func ForParts(fcs []forecast.Forecast, jobs []forecast.JobRequest, scripted map[string]bool) ([]forecast.Forecast, []forecast.JobRequest, []string) {
	return forParts(fcs, jobs, scripted, markedNodes)
}

// forParts is ForParts with each site's planning node list from marked
// (markedNodes, or PartsCache's copy of its answer).
func forParts(fcs []forecast.Forecast, jobs []forecast.JobRequest, scripted map[string]bool,
	marked func(*forecast.Forecast) []forecast.Node) ([]forecast.Forecast, []forecast.JobRequest, []string) {
	off := NoParts(fcs)
	if len(off) == 0 || !slices.ContainsFunc(jobs, func(j forecast.JobRequest) bool { return scripted[j.ID] }) {
		return fcs, jobs, off
	}
	outF := make([]forecast.Forecast, len(fcs))
	for i := range fcs {
		outF[i] = fcs[i]
		outF[i].Nodes = marked(&fcs[i])
	}
	outJ := make([]forecast.JobRequest, len(jobs))
	for i, j := range jobs {
		outJ[i] = j
		if scripted[j.ID] {
			outJ[i].Features = append(slices.Clip(j.Features), partsFeature)
		}
	}
	return outF, outJ, off
}

// markedNodes is a forecast's node list as the planning input has it.
func markedNodes(f *forecast.Forecast) []forecast.Node { return markNodes(f.Nodes, f.TakesParts()) }

// markNodes copies nodes with partsFeature on each when the site takes
// parts, and without it (a site's own feature of that name) when not.
func markNodes(nodes []forecast.Node, takes bool) []forecast.Node {
	out := make([]forecast.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		feats := slices.DeleteFunc(slices.Clone(n.Features), func(f string) bool { return f == partsFeature })
		if takes {
			feats = append(feats, partsFeature)
		}
		out[i].Features = feats
	}
	return out
}

// NoParts lists the sites of fcs whose agent says it does not run parts,
// in forecast order.
func NoParts(fcs []forecast.Forecast) []string {
	var off []string
	for i := range fcs {
		if !fcs[i].TakesParts() {
			off = append(off, fcs[i].Site)
		}
	}
	return off
}

// TakingParts keeps the forecasts of the sites that take parts.
func TakingParts(fcs []forecast.Forecast) []forecast.Forecast {
	return slices.DeleteFunc(slices.Clone(fcs), func(f forecast.Forecast) bool { return !f.TakesParts() })
}

// NoPartsWhy says, for a job with a script, which sites it was not
// planned on because their agents do not run parts ("" when none).
func NoPartsWhy(off []string) string {
	if len(off) == 0 {
		return ""
	}
	return "not planned on " + sitesOff(off)
}

// notPartsFit rewrites the error of each job with a script that got no
// allocation while sites were left out for not running parts: with no
// site left at all it says so instead of the planner's "no node meets the
// requirements" (the requirement was partsFeature), else it adds which
// sites were left out.
func notPartsFit(allocs []forecast.Allocation, jobs []forecast.JobRequest, scripted map[string]bool, fcs []forecast.Forecast, off []string) {
	if len(off) == 0 {
		return
	}
	none := len(off) == len(fcs)
	for i := range allocs {
		a := &allocs[i]
		if a.Placed() || !scripted[jobs[i].ID] || strings.HasPrefix(a.Error, "invalid") {
			continue
		}
		if none {
			a.Error = "no-fit: the job has a script, and no fresh site runs parts " + sitesOff(off)
			continue
		}
		a.Error += "; " + NoPartsWhy(off)
	}
}

// offWhy says why the sites off do not take parts, in the singular or
// the plural.
func offWhy(off []string) string {
	if len(off) > 1 {
		return "do not run parts: dispatch is off in their agents' configs"
	}
	return "does not run parts: " + noPartsNote
}

// sitesOff is "(why): the sites".
func sitesOff(off []string) string {
	return "(" + offWhy(off) + "): " + strings.Join(off, ", ")
}

// ExplainParts is why a job with a script got no allocation: explain on
// the forecasts of the sites that take parts, then which sites were left
// out for not running them; with none left, only that.
func ExplainParts(fcs []forecast.Forecast, explain func([]forecast.Forecast) string) string {
	off := NoParts(fcs)
	if len(off) == 0 {
		return explain(fcs)
	}
	if len(off) == len(fcs) {
		return "the job has a script, and no fresh site runs parts " + sitesOff(off)
	}
	return explain(TakingParts(fcs)) + "; " + NoPartsWhy(off)
}

// ForParts is the part of c a job with a script may use: the sites that
// take parts, and the names of those that do not (sorted).
func (c Capacity) ForParts() (Capacity, []string) {
	var off []string
	for name, z := range c {
		if z.NoParts {
			off = append(off, name)
		}
	}
	if len(off) == 0 {
		return c, nil
	}
	slices.Sort(off)
	keep := Capacity{}
	for name, z := range c {
		if !z.NoParts {
			keep[name] = z
		}
	}
	return keep, off
}

// check is Refuse and TooLong with their reply codes. A job with a
// script (scripted: its parts are dispatched) is checked on the sites
// that run parts only, saying which were not counted; with none known
// while some are, it is refused for that.
func (c Capacity) check(job forecast.JobRequest, scripted bool) (code, msg string) {
	note := ""
	if scripted {
		var off []string
		c, off = c.ForParts()
		if len(off) > 0 && len(c) == 0 {
			return wire.CodeNoCapacity, "the job has a script, and no site known runs parts " + sitesOff(off) +
				"; submit it without a script and run its parts by hand, or ask a site to turn dispatch on"
		}
		if len(off) > 0 {
			note = "; only sites that run parts count for a job with a script, not " + sitesOff(off)
		}
	}
	if msg := c.Refuse(job); msg != "" {
		return wire.CodeNoCapacity, msg + note
	}
	if msg := c.TooLong(job); msg != "" {
		return wire.CodeTooLong, msg + note
	}
	return "", ""
}
