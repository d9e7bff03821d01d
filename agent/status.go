package agent

import "slices"

// Status is what `lookahead-agent status` shows: the agent's last
// forecast, its publications and the forecast-accuracy summary. It is also
// the reply of the service's status endpoint.
type Status struct {
	Site        string `json:"site"`
	Revision    uint64 `json:"revision"`
	Generated   int64  `json:"generated,omitempty"`
	Horizon     int64  `json:"horizon,omitempty"`
	Nodes       int    `json:"nodes"`
	Slots       int    `json:"slots"`
	Bytes       int    `json:"bytes"`
	Forecasts   int    `json:"forecasts_published"`
	Heartbeats  int    `json:"heartbeats_published"`
	LastPublish int64  `json:"last_publish,omitempty"`
	LastError   string `json:"last_error,omitempty"`
	// Failures counts the forecast cycles that failed (snapshot, engine
	// or publish) since the last one that published.
	Failures int             `json:"consecutive_failures,omitempty"`
	Accuracy AccuracySummary `json:"accuracy"`
	Requests map[string]int  `json:"requests,omitempty"` // by verb/code
	// Queue is the local jobs waiting at the last forecast, each with its
	// predicted start (queue.go); QueueTotal counts them all.
	Queue      []QueuedJob `json:"queue,omitempty"`
	QueueTotal int         `json:"queue_total"`
	// RunsParts says whether the agent runs grid jobs' parts (its
	// dispatch is on), as its forecasts say (forecast.RunsParts).
	RunsParts bool `json:"runs_parts"`
}

// Status returns a copy of the agent's current status.
func (a *Agent) Status() Status {
	a.mu.Lock()
	s := a.state
	s.Requests = make(map[string]int, len(a.state.Requests))
	for k, v := range a.state.Requests {
		s.Requests[k] = v
	}
	s.Queue = slices.Clone(a.state.Queue)
	a.mu.Unlock()
	s.Accuracy = a.acc.Summary()
	s.RunsParts = a.runsParts()
	return s
}

// Revision is the Seq of the last forecast the agent published.
func (a *Agent) Revision() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Revision
}

func (a *Agent) published(r publishResult, b *built) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state.LastPublish = r.at.Unix()
	a.state.LastError, a.state.Failures = "", 0
	if r.kind == "heartbeat" {
		a.state.Heartbeats++
		a.met.HeartbeatPublished(r.at)
		return
	}
	a.state.Forecasts++
	a.state.Revision = r.seq
	a.state.Generated = b.forecast.Generated
	a.state.Horizon = b.forecast.Horizon
	a.state.Nodes = len(b.forecast.Nodes)
	a.state.Slots = len(b.forecast.Slots)
	a.state.Bytes = r.bytes
	a.met.ForecastPublished(r.seq, len(b.forecast.Slots), r.bytes, r.at)
}

func (a *Agent) setError(err error) {
	a.mu.Lock()
	a.state.LastError = err.Error()
	a.state.Failures++
	a.mu.Unlock()
}

func (a *Agent) countRequest(verb, code string) {
	a.met.ReservationRequest(verb, code)
	a.mu.Lock()
	if a.state.Requests == nil {
		a.state.Requests = map[string]int{}
	}
	a.state.Requests[verb+"/"+code]++
	a.mu.Unlock()
}
