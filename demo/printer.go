package demo

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// printer renders the live output: one line per thing that happened,
// stamped with simulated time since the demo's start. Safe for concurrent
// use.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	clock    *Clock
	color    bool
	lastSite map[string]time.Time // real time of the last forecast line per site
	lastPlan string
}

func newPrinter(w io.Writer, c *Clock, color bool) *printer {
	return &printer{w: w, clock: c, color: color, lastSite: map[string]time.Time{}}
}

const (
	cDim, cBold, cRed, cGreen, cYellow, cBlue, cMagenta, cCyan = "2", "1", "31", "32", "33", "34", "35", "36"
)

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// stamp is simulated time since the start, as +hh:mm.
func (p *printer) stamp() string {
	d := p.clock.Now().Sub(p.clock.Origin())
	return fmt.Sprintf("+%02d:%02d", int(d.Hours()), int(d.Minutes())%60)
}

// at renders a simulated Unix time as +hh:mm since the start.
func (p *printer) at(t int64) string {
	d := time.Unix(t, 0).Sub(p.clock.Origin())
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%s%02d:%02d", sign, int(d.Hours()), int(d.Minutes())%60)
}

// unixTime is a Unix time in seconds as agents and the broker write them
// in messages (10 digits: 2001 to 2286).
var unixTime = regexp.MustCompile(`\b[1-9][0-9]{9}\b`)

// relative rewrites the Unix times in a message from a site or the broker
// (a refusal naming the instant a node is busy) as +hh:mm since the start,
// as every other time the demo prints; numbers more than a year from the
// start are left alone (they are not times of this run).
func (p *printer) relative(msg string) string {
	origin := p.clock.Origin().Unix()
	return unixTime.ReplaceAllStringFunc(msg, func(s string) string {
		t, err := strconv.ParseInt(s, 10, 64)
		if err != nil || t < origin-365*86400 || t > origin+365*86400 {
			return s
		}
		return p.at(t)
	})
}

func (p *printer) line(code, tag, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s %s\n", p.paint(cDim, p.stamp()), p.paint(code, fmt.Sprintf("%-9s", tag)), text)
}

func (p *printer) note(text string) { p.line(cYellow, "note", text) }

func (p *printer) banner(o Options) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, p.paint(cBold, "lookahead demo")+" — an embedded NATS server, simulated Torque/Maui and Slurm sites replaying")
	fmt.Fprintln(p.w, "real workloads (Parallel Workloads Archive), one agent per site, and the broker, in one process.")
	fmt.Fprintf(p.w, "Time runs %.0f× faster: %s of demo = %.1f simulated hours. Ctrl-C stops it cleanly.\n\n",
		o.Speed, o.Duration, o.Duration.Hours()*o.Speed)
	for _, s := range Sites {
		fmt.Fprintf(p.w, "  %-6s %-11s %3d nodes × %d procs = %3d, speed %.1f, free time at %.1f credits/CPU-h (local load: %s)\n",
			s.Name, s.Kind, s.Nodes, s.PPN, s.procs(), s.Speed, s.Base, s.Trace)
	}
	fmt.Fprintln(p.w)
}

func (p *printer) forecast(f *forecast.Forecast) {
	p.mu.Lock()
	last, seen := p.lastSite[f.Site]
	if seen && time.Since(last) < 10*time.Second {
		p.mu.Unlock()
		return
	}
	p.lastSite[f.Site] = time.Now()
	p.mu.Unlock()
	free := 0.0
	for _, s := range f.Slots {
		free += float64(s.Procs) * float64(s.End-s.Start) / 3600
	}
	what := "forecast"
	if !seen {
		what = "online"
	}
	p.line(cBlue, what, fmt.Sprintf("%-6s rev %-3d %3d nodes, %5d slots, %6.0f CPU-h offered in the next %s",
		f.Site, f.Seq, len(f.Nodes), len(f.Slots), free, simDur(f.Horizon-f.Generated)))
}

func (p *printer) submitted(j forecast.JobRequest, reply wire.SubmitReply) {
	if reply.Code != wire.CodeOK {
		p.line(cRed, "refused", fmt.Sprintf("%s: %s", describe(j), reply.Message))
		return
	}
	p.line(cCyan, "submit", fmt.Sprintf("%-4s %s", reply.Job, describe(j)))
}

func (p *printer) plan(pl wire.Plan) {
	placed, multi, nofit := 0, 0, 0
	for _, a := range pl.Allocations {
		switch {
		case a.Placed():
			placed++
			if len(a.Sites()) > 1 {
				multi++
			}
		default:
			nofit++
		}
	}
	key := fmt.Sprintf("%d/%d/%d/%v", placed, multi, nofit, pl.Stale)
	p.mu.Lock()
	same := key == p.lastPlan
	p.lastPlan = key
	p.mu.Unlock()
	if same || len(pl.Allocations) == 0 {
		return
	}
	text := fmt.Sprintf("cycle %-3d %2d waiting: %d placed (%d across sites), %d no fit yet; %.1f ms",
		pl.Cycle, len(pl.Allocations), placed, multi, nofit, float64(pl.Micros)/1000)
	if len(pl.Stale) > 0 {
		text += "; stale: " + strings.Join(pl.Stale, ",")
	}
	p.line(cDim, "plan", text)
}

func (p *printer) event(e broker.Event) {
	switch e.Kind {
	case broker.EvIntent:
		p.line(cMagenta, "reserving", fmt.Sprintf("%-4s on %s from %s", e.Job, strings.Join(e.Alloc.Sites(), ", "), p.at(e.Alloc.Start)))
	case broker.EvOutcome:
		if e.OK {
			p.line(cGreen, "reserved", fmt.Sprintf("%-4s %s, %s → %s, %.1f credits", e.Job, sitesOf(e), p.at(first(e).Start), p.at(first(e).End), e.Cost))
		} else {
			p.line(cRed, "rollback", fmt.Sprintf("%-4s %s", e.Job, p.relative(e.Message)))
		}
	case broker.EvReleased:
		p.line(cYellow, "released", fmt.Sprintf("%-4s on %s", e.Job, e.Site))
	case broker.EvSite:
		if e.Part != nil && e.Part.LocalID == "" {
			return // a dispatched part's reservation reported: the part's own report follows
		}
		p.line(cDim, e.State, fmt.Sprintf("%-4s on %s%s", e.Job, e.Site, partNote(e)))
	case broker.EvDispatched, broker.EvConcluded, broker.EvStopped:
		p.dispatchEvent(e)
	case broker.EvExpired:
		p.line(cYellow, "no-show", fmt.Sprintf("%-4s %s", e.Job, e.Message))
	case broker.EvCancelled:
		p.line(cYellow, "cancelled", e.Job)
	}
}

func first(e broker.Event) wire.Reservation {
	if len(e.Reservations) == 0 {
		return wire.Reservation{}
	}
	return e.Reservations[0]
}

func (p *printer) summary(s Summary, interrupted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.w
	title := "summary"
	if interrupted {
		title = "summary (interrupted)"
	}
	fmt.Fprintf(w, "\n%s — %.0f s real, %.1f h simulated\n", p.paint(cBold, title), s.RealSeconds, s.SimulatedHours)
	row := func(k, v string) { fmt.Fprintf(w, "  %-34s %s\n", k, v) }
	row("sites / local jobs replayed", fmt.Sprintf("%d / %d", s.Sites, s.LocalJobs))
	row("grid jobs submitted / refused", fmt.Sprintf("%d / %d", s.Submitted, s.Refused))
	row("grid jobs placed (reserved)", p.paint(cGreen, fmt.Sprint(s.Placed)))
	row("  of which across several sites", p.paint(cGreen, fmt.Sprint(s.MultiSite)))
	row("  of which Slurm + Torque/Maui", p.paint(cGreen, fmt.Sprint(s.CrossKind))+" "+strings.Join(s.CrossKindJobs, ", "))
	row("  finished / running / no-show", fmt.Sprintf("%d / %d / %d", s.Finished, s.Running, s.Expired))
	row("  with a script / failed", fmt.Sprintf("%d / %d", s.Scripted, s.Failed))
	row("still waiting", fmt.Sprint(s.Waiting))
	row("mean wait, submit → reserved start", fmt.Sprintf("%.0f min (simulated)", s.MeanWaitMinutes))
	row("cost charged", fmt.Sprintf("%.1f credits", s.Cost))
	row("commits rolled back", fmt.Sprint(s.Rollbacks))
	row("planning cycles (mean time)", fmt.Sprintf("%d (%.2f ms)", s.Cycles, s.MeanCycleMicros/1000))
	audit := p.paint(cGreen, fmt.Sprintf("%d reservations checked on every site: broker and sites agree", s.AuditChecked))
	if s.AuditFindings > 0 || s.AuditErrors > 0 {
		audit = p.paint(cRed, fmt.Sprintf("%d checked, %d findings, %d sites unanswered", s.AuditChecked, s.AuditFindings, s.AuditErrors))
	}
	row("audit", audit)
	for _, d := range s.AuditDetail {
		row("", p.paint(cRed, d))
	}
}
