package demo

import (
	"fmt"
	"strings"

	"lookahead/broker"
	"lookahead/wire"
)

// dispatchEvent prints what happens to the parts of a job the broker runs:
// a part submitted into its reservation (or refused), the job's end with
// its final charge, and the deletion of the parts still running.
func (p *printer) dispatchEvent(e broker.Event) {
	switch e.Kind {
	case broker.EvDispatched:
		if e.State == wire.PartFailed {
			p.line(cRed, "refused", fmt.Sprintf("%-4s part on %s: %s", e.Job, e.Site, e.Message))
			return
		}
		local := ""
		if e.Part != nil {
			local = fmt.Sprintf(" as %s (%s)", e.Part.LocalID, e.Part.LocalUser)
		}
		p.line(cCyan, "dispatch", fmt.Sprintf("%-4s part on %s queued into its reservation%s", e.Job, e.Site, local))
	case broker.EvConcluded:
		code := cGreen
		if e.State == wire.JobFailed {
			code = cRed
		}
		text := fmt.Sprintf("%-4s %s: %s; charged %.1f credits", e.Job, e.State, e.Message, e.Cost)
		if len(e.Stop) > 0 {
			text += fmt.Sprintf("; deleting the parts on %s", strings.Join(e.Stop, ", "))
		}
		p.line(code, "job-end", text)
	case broker.EvStopped:
		p.line(cYellow, "deleted", fmt.Sprintf("%-4s on %s: %s", e.Job, e.Site, e.Message))
	}
}

// partNote is the detail of a dispatched part's report: its local job id
// and exit status.
func partNote(e broker.Event) string {
	if e.Part == nil || e.Part.LocalID == "" {
		return ""
	}
	s := " (" + e.Part.LocalID
	if e.Part.ExitStatus != nil {
		s += fmt.Sprintf(", exit status %d", *e.Part.ExitStatus)
	}
	return s + ")"
}

// nats says where the embedded NATS server listens, so lookahead status
// can ask the demo's broker why a job waits or is planned where it is.
func (p *printer) nats(url string) {
	p.line(cCyan, "nats", url+"  ← lookahead status --nats-url "+url+" [JOB]: the queue, and why a job waits or is planned where it is")
}

// web says where the web view is.
func (p *printer) web(url string) {
	p.line(cCyan, "web", url+"  ← open in a browser: sites, forecasts as a Gantt, the queue, the audit trail (live, read-only)")
}
