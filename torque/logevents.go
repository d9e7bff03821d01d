package torque

import "strings"

// LogEvent turns a server_logs record into its event, when the record
// says something lookahead cares about; ok is false otherwise (most lines).
// It recognises, in all three formats:
//   - "svr_setjobstate: setting job J state from A to B" (loglevel ≥ 4;
//     object svr_setjobstate in 4.2/6.1, Svr;PBS_Server in 2.5)
//   - job lines: "enqueuing into", "Job Run at request of", "Job deleted at
//     request of", "Exit_status=", "Job Modified at request of",
//     "attributes set/unset", holds, moves, reruns and aborts (the texts of
//     Torque's pbs_messages.c; only the first five occur in the captures)
//   - node lines: "node N state changed from A to B", "node N marked S",
//     "attributes set"
//   - "Server NAME started", "Server shutdown completed".
func LogEvent(r LogRecord) (Event, bool) {
	ev := Event{Time: r.Time, Source: SourceServerLog, Text: r.Message}
	if r.Continued {
		return ev, false
	}
	msg := r.Message
	if rest, ok := strings.CutPrefix(msg, "svr_setjobstate: setting job "); ok {
		return jobStateEvent(ev, rest)
	}
	switch r.Class {
	case "Job":
		return jobLineEvent(ev, r.Object, msg)
	case "node":
		return nodeLineEvent(ev, r.Object, msg)
	case "Req":
		if r.Object == "update_node_state" {
			return nodeMarkedEvent(ev, msg)
		}
	case "Svr":
		return serverEvent(ev, msg)
	}
	return ev, false
}

// jobStateEvent reads "J state from A to B (n-m)".
func jobStateEvent(ev Event, s string) (Event, bool) {
	job, rest, ok := strings.Cut(s, " state from ")
	if !ok {
		return ev, false
	}
	from, rest, ok := strings.Cut(rest, " to ")
	if !ok {
		return ev, false
	}
	to, _, _ := strings.Cut(rest, " ")
	ev.Kind, ev.Job, ev.From, ev.To = JobStateChanged, job, from, to
	return ev, job != "" && to != ""
}

var jobLinePrefixes = []struct {
	prefix string
	kind   EventKind
}{
	{"enqueuing into ", JobQueued},
	{"Job Run at request of ", JobStarted},
	{"Job deleted at request of ", JobDeleted},
	{"Exit_status=", JobEnded},
	{"Job Modified at request of ", JobModified},
	{"attributes set", JobModified},
	{"attributes unset", JobModified},
	{"Holds ", JobModified}, // "Holds u set/released at request of"
	{"Job moved to ", JobModified},
	{"Job Rerun at request of ", JobRerun},
	{"Aborted by PBS Server", JobAborted},
	{"Job aborted on PBS Server initialization", JobAborted},
	{"Job deleted as result of dependency on job", JobDeleted},
}

func jobLineEvent(ev Event, object, msg string) (Event, bool) {
	if object == "" || object == "NULL" || !strings.Contains(object, ".") {
		return ev, false
	}
	for _, p := range jobLinePrefixes {
		if strings.HasPrefix(msg, p.prefix) {
			ev.Kind, ev.Job = p.kind, object
			if p.kind == JobEnded {
				code, _, _ := strings.Cut(msg[len(p.prefix):], " ")
				if n, ok := atoiSigned(code); ok {
					ev.ExitStatus = &n
				}
			}
			return ev, true
		}
	}
	return ev, false
}

func nodeLineEvent(ev Event, object, msg string) (Event, bool) {
	if rest, ok := strings.CutPrefix(msg, "node "+object+" state changed from "); ok {
		from, to, ok := strings.Cut(rest, " to ")
		ev.Kind, ev.Node, ev.From, ev.To = NodeStateChanged, object, from, strings.TrimSpace(to)
		return ev, ok
	}
	if strings.HasPrefix(msg, "attributes set") {
		ev.Kind, ev.Node = NodeModified, object
		return ev, true
	}
	return ev, false
}

// nodeMarkedEvent reads update_node_state's "node N marked S".
func nodeMarkedEvent(ev Event, msg string) (Event, bool) {
	rest, ok := strings.CutPrefix(msg, "node ")
	if !ok {
		return ev, false
	}
	node, state, ok := strings.Cut(rest, " marked ")
	if !ok || node == "" {
		return ev, false
	}
	ev.Kind, ev.Node, ev.To = NodeStateChanged, node, strings.TrimSpace(state)
	return ev, true
}

func serverEvent(ev Event, msg string) (Event, bool) {
	switch {
	case strings.HasPrefix(msg, "Server ") && strings.Contains(msg, " started, initialization type"):
		ev.Kind = ServerStarted
		return ev, true
	case msg == "Server shutdown completed":
		ev.Kind = ServerShutdown
		return ev, true
	}
	return ev, false
}
