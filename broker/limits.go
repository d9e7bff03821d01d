package broker

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"lookahead/forecast"
	"lookahead/wire"
)

// Bounds on what one submission may carry, checked before anything echoes
// a value back.
const (
	maxNameBytes   = forecast.MaxNameBytes // job id, user, account, criterion, feature, request_id
	maxActorBytes  = 128                   // a NATS user name
	maxJobFeatures = 32
)

// checkActor refuses a NATS user name (the submit subject's last token)
// that is too long or holds control characters or spaces: it goes into
// logs, audit records and reservation requests.
func checkActor(actor string) string { return checkToken("NATS user name", actor, maxActorBytes) }

// checkToken refuses a value that is too long, not UTF-8 or holds control
// characters or spaces, without echoing it at length. The client's
// request_id is one: it also goes into a NATS header (the job stream's
// message id), where a newline would break the message.
func checkToken(what, v string, maxBytes int) string {
	if len(v) > maxBytes {
		return fmt.Sprintf("%s of %d bytes: at most %d", what, len(v), maxBytes)
	}
	if !utf8.ValidString(v) {
		return what + " is not valid UTF-8"
	}
	for _, r := range v {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return fmt.Sprintf("%s %q holds a control character or space", what, v)
		}
	}
	return ""
}

// checkSizes refuses overlong names and feature lists without echoing
// them (the validation after it quotes values).
func checkSizes(job *forecast.JobRequest) string {
	for _, f := range []struct{ name, v string }{{"job id", job.ID}, {"user", job.User}, {"account", job.Account}, {"criterion", job.Criterion}} {
		if len(f.v) > maxNameBytes {
			return fmt.Sprintf("%s of %d bytes: at most %d", f.name, len(f.v), maxNameBytes)
		}
	}
	if len(job.Features) > maxJobFeatures {
		return fmt.Sprintf("%d features: at most %d", len(job.Features), maxJobFeatures)
	}
	for i, f := range job.Features {
		if !forecast.IsPlainName(f) {
			return fmt.Sprintf("features[%d] %q: must be a plain name", i, wire.Clip(f, maxNameBytes))
		}
	}
	return ""
}

// checkActive refuses a job over its user's or account's bound on active
// jobs.
func checkActive(s *State, p Policy, job *forecast.JobRequest) string {
	if p.MaxActivePerUser <= 0 && p.MaxActivePerAccount <= 0 {
		return ""
	}
	users, accounts := 0, 0
	if job.User != "" {
		users = s.ledger.active(holder{"user", job.User})
	}
	if job.Account != "" {
		accounts = s.ledger.active(holder{"account", job.Account})
	}
	if p.MaxActivePerUser > 0 && users >= p.MaxActivePerUser {
		return fmt.Sprintf("user %s has %d active grid jobs, at most %d: wait for some to end or cancel some", job.User, users, p.MaxActivePerUser)
	}
	if p.MaxActivePerAccount > 0 && accounts >= p.MaxActivePerAccount {
		return fmt.Sprintf("account %s has %d active grid jobs, at most %d", job.Account, accounts, p.MaxActivePerAccount)
	}
	return ""
}
