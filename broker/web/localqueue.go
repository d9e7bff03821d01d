package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// LocalQueue is /api/sites/{site}/queue: what the site's agent says of
// its local queue (the jobs waiting in the site's scheduler, each with
// the start its last forecast predicts), asked when the page asks (not
// carried in forecasts).
// Total counts every waiting job (Jobs lists at most the agent's first
// 1,000, soonest predicted start first); Known is false when the agent
// does not report its queue (an agent older than this field); Error says
// why nothing could be read.
type LocalQueue struct {
	Site      string           `json:"site"`
	Revision  uint64           `json:"revision"`
	Generated int64            `json:"generated"`
	Known     bool             `json:"known"`
	Total     int              `json:"total"`
	Jobs      []wire.QueuedJob `json:"jobs"`
	Error     string           `json:"error,omitempty"`
}

// ParseLocalQueue reads the agent's status reply (the fields the page
// shows; others are ignored).
func ParseLocalQueue(site string, data []byte) (LocalQueue, error) {
	var st struct {
		Revision  uint64           `json:"revision"`
		Generated int64            `json:"generated"`
		Queue     []wire.QueuedJob `json:"queue"`
		Total     *int             `json:"queue_total"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return LocalQueue{Site: site, Jobs: []wire.QueuedJob{}}, fmt.Errorf("status of %s: %w", site, err)
	}
	q := LocalQueue{Site: site, Revision: st.Revision, Generated: st.Generated, Known: st.Total != nil, Jobs: st.Queue}
	if st.Total != nil {
		q.Total = *st.Total
	}
	if q.Jobs == nil {
		q.Jobs = []wire.QueuedJob{}
	}
	return q, nil
}

// LocalQueueWait bounds how long the page waits for a site's agent.
const LocalQueueWait = 5 * time.Second

func (s *Server) apiLocalQueue(w http.ResponseWriter, r *http.Request) {
	site := r.PathValue("site")
	if !forecast.IsPlainName(site) {
		http.Error(w, "site must be a plain name", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), LocalQueueWait)
	defer cancel()
	q := LocalQueue{Site: site, Jobs: []wire.QueuedJob{}}
	data, err := s.b.AgentStatus(ctx, site)
	if err == nil {
		q, err = ParseLocalQueue(site, data)
	}
	if err != nil {
		q.Error = fmt.Sprintf("the agent of %s did not say: %v", site, err)
	}
	writeJSON(w, q)
}
