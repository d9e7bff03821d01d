package wire

import (
	"fmt"
	"strings"
)

// Subjects, buckets and streams. Each subject has a wildcard form (for
// subscriptions and permissions) and a template (for one site or one verb).
const (
	// ForecastSubjectT is where site %s publishes its forecasts and heartbeats.
	ForecastSubjectT = "lookahead.forecast.%s"
	ForecastSubjects = "lookahead.forecast.*"

	// ForecastBucket keeps the latest forecast per site, keyed by site name.
	ForecastBucket = "lookahead-forecasts"

	// AgentServiceName is the micro service every agent registers; its
	// endpoints live under AgentSubjectT (site, verb).
	AgentServiceName = "lookahead-agent"
	AgentSubjectT    = "lookahead.agent.%s.%s"
	AgentSubjects    = "lookahead.agent.>"
	VerbReserve      = "reserve"
	VerbRelease      = "release"
	VerbList         = "list"
	// VerbAgentStatus is the agent's status (lookahead-agent status): its
	// last forecast, its publications, and the local jobs waiting with the
	// start that forecast predicts for each.
	VerbAgentStatus = "status"

	// JobEventSubjectT carries what a site saw of grid jobs (started,
	// finished) so the broker can follow them: site, grid job id.
	JobEventSubjectT = "lookahead.jobevent.%s.%s"
	JobEventSubjects = "lookahead.jobevent.>"

	// BrokerServiceName is the broker's micro service; its endpoints are
	// BrokerSubjectT (verb).
	BrokerServiceName = "lookahead-broker"
	BrokerSubjectT    = "lookahead.broker.%s"
	BrokerSubjects    = "lookahead.broker.>"
	VerbSubmit        = "submit"
	VerbCancel        = "cancel"
	VerbStatus        = "status"
	VerbPlan          = "plan"
	VerbSites         = "sites"

	// JobStream keeps the grid queue durably (submissions, cancels, state
	// changes) under JobSubjects.
	JobStream   = "LOOKAHEAD_JOBS"
	JobSubjectT = "lookahead.jobs.%s"
	JobSubjects = "lookahead.jobs.>"
	// JobSnapshotSubject carries the broker's snapshots of the queue in
	// the job stream ('$' is never in a job id, a plain name).
	JobSnapshotSubject = "lookahead.jobs.$snapshot"

	// AuditStream is the append-only audit trail; records are published on
	// AuditSubjectT (origin: a site name or "broker", action).
	AuditStream   = "LOOKAHEAD_AUDIT"
	AuditSubjectT = "lookahead.audit.%s.%s"
	AuditSubjects = "lookahead.audit.>"
)

// ForecastSubject is the subject site publishes its forecasts on.
func ForecastSubject(site string) string { return fmt.Sprintf(ForecastSubjectT, site) }

// AgentSubject is the subject of one agent endpoint.
func AgentSubject(site, verb string) string { return fmt.Sprintf(AgentSubjectT, site, verb) }

// BrokerSubject is the subject of one broker endpoint.
func BrokerSubject(verb string) string { return fmt.Sprintf(BrokerSubjectT, verb) }

// AuditSubject is the subject an audit record of origin and action goes to.
func AuditSubject(origin, action string) string {
	return fmt.Sprintf(AuditSubjectT, origin, action)
}

// JobEventSubject is the subject a site reports a grid job's progress on.
func JobEventSubject(site, job string) string { return fmt.Sprintf(JobEventSubjectT, site, job) }

// SiteReplyToken is the token after the broker's inbox prefix in the reply
// subjects of its requests to a site's agent: replies to site S come back
// on <prefix>.site.S.<id>.<n> (_INBOX_broker.site.S.> in
// packaging/nats/grid.conf, the only reply subjects S may publish). A
// site behind a leaf node answers that way, where allow_responses does
// not reach.
const SiteReplyToken = "site"

// AgentSite is the site an agent endpoint's subject names
// (AgentSubject's inverse); false for another subject.
func AgentSite(subject string) (string, bool) {
	const pre = "lookahead.agent."
	if !strings.HasPrefix(subject, pre) {
		return "", false
	}
	rest := subject[len(pre):]
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}
