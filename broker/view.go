package broker

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"lookahead/forecast"
	"lookahead/wire"
)

// Viewer is who asks for the queue: a NATS user (the status subject's last
// token), and whether it sees every job (an operator, or a setup without
// identities).
type Viewer struct {
	Actor string
	All   bool
}

// ViewerFor is the viewer actor is under policy p.
func ViewerFor(p Policy, actor string) Viewer {
	return Viewer{Actor: actor, All: p.Identities == nil || (actor != "" && slices.Contains(p.Operators, actor))}
}

// Sees reports whether v may see job j: its own submissions, and jobs of
// the grid users it may act for.
func (v Viewer) Sees(p Policy, j *Job) bool {
	return v.All || (v.Actor != "" && (j.Actor == v.Actor || mayAct(p, v.Actor, j)))
}

// Page bounds one status reply.
type Page struct {
	// Jobs is the most jobs in one reply (default and cap DefaultPageJobs).
	Jobs int
	// Bytes is the most bytes the jobs may take encoded: keep it under the
	// NATS server's max_payload with room for the envelope.
	Bytes int
}

// DefaultPageJobs is the most jobs one status reply carries.
const DefaultPageJobs = 1000

// Status answers one status request for viewer v: one job (req.Job), or
// the queue in submission order from after the cursor req.After, as many
// jobs as fit in the page. Next is the cursor of the next page (0: none).
// planned gives the last cycle's allocation of a waiting job. A job whose
// record cannot be rendered as JSON (a non-finite number) is shown with
// the numbers zeroed and a note, never breaking the reply for others.
func (s *State) Status(p Policy, v Viewer, req wire.StatusRequest, planned func(string) *Planned, pg Page, now int64) wire.StatusReply {
	reply, _ := s.StatusEncoded(p, v, req, planned, pg, now)
	return reply
}

// StatusEncoded is Status with every job of the reply also encoded as
// JSON (encoded[i] is reply.Jobs[i]), as the page was sized on: a server
// sends them without encoding them again.
func (s *State) StatusEncoded(p Policy, v Viewer, req wire.StatusRequest, planned func(string) *Planned, pg Page, now int64) (wire.StatusReply, []json.RawMessage) {
	reply := wire.StatusReply{Type: wire.TypeStatusReply, Code: wire.CodeOK, Now: now, Jobs: []wire.JobStatus{}}
	encoded := []json.RawMessage{}
	limit := DefaultPageJobs
	for _, l := range []int{pg.Jobs, req.Limit} {
		if l > 0 {
			limit = min(limit, l)
		}
	}
	size, last := 0, uint64(0)
	for _, j := range s.pageFrom(req) {
		switch {
		case req.Job == "" && !req.All && !j.Active(), !v.Sees(p, j):
			continue
		}
		var pl *Planned
		if j.State == wire.JobWaiting && planned != nil {
			pl = planned(j.Req.ID)
		}
		st := j.StatusPlanned(pl)
		st.Criterion = plannedCriterion(j.Req, p.Criterion)
		st, data := renderable(st)
		if len(reply.Jobs) > 0 && (len(reply.Jobs) >= limit || (pg.Bytes > 0 && size+len(data) > pg.Bytes)) {
			reply.Next = last
			break
		}
		reply.Jobs, encoded = append(reply.Jobs, st), append(encoded, data)
		size, last = size+len(data)+1, j.seq
	}
	if req.Job != "" && len(reply.Jobs) == 0 {
		reply.Code, reply.Message = wire.CodeNotFound, fmt.Sprintf("no job %q", wire.Clip(req.Job, 64))
	}
	return reply, encoded
}

// pageFrom is the jobs a status request may list, in submission order:
// the one it names, or every job after its cursor (found by a binary
// search: a page costs what it lists and skips, not a sort of the queue).
func (s *State) pageFrom(req wire.StatusRequest) []*Job {
	if req.Job != "" {
		if j := s.jobs[req.Job]; j != nil {
			return []*Job{j}
		}
		return nil
	}
	return s.order[s.after(req.After):]
}

// Planned is what the last cycle says of a waiting job: its allocation (or
// why it does not fit) and its place in the queue.
type Planned struct {
	Alloc forecast.Allocation
	Queue wire.QueuePlace
}

// StatusPlanned is j's status with what the last cycle says of it (pl:
// nil when it planned nothing for j): its plan and its place in the
// queue. The status endpoint and the web view both render a waiting job
// through it.
func (j *Job) StatusPlanned(pl *Planned) wire.JobStatus {
	st := j.Status(pl.Allocation())
	if pl != nil && pl.Queue.Of > 0 {
		q := pl.Queue
		st.Queue = &q
	}
	return st
}

// Allocation is p's allocation (nil when p is nil).
func (p *Planned) Allocation() *forecast.Allocation {
	if p == nil {
		return nil
	}
	return &p.Alloc
}

// plannedCriterion is the criterion a request is planned with: its own,
// else the planner's default for requests that omit one.
func plannedCriterion(r forecast.JobRequest, def string) string {
	if r.Criterion != "" || def == "" {
		return r.CriterionOrDefault()
	}
	return def
}

// renderable returns st and its encoding, or, when st cannot be encoded,
// st with every number that is not finite set to 0 and a note.
func renderable(st wire.JobStatus) (wire.JobStatus, json.RawMessage) {
	data, err := json.Marshal(st)
	if err == nil {
		return st, data
	}
	st.Cost, st.WorstCost = finite(st.Cost), finite(st.WorstCost)
	st.Job.MaxPrice, st.Job.MinSpeed = finite(st.Job.MaxPrice), finite(st.Job.MinSpeed)
	if st.Plan != nil {
		a := *st.Plan
		a.Cost = finite(a.Cost)
		st.Plan = &a
	}
	st.Message = "this job's record holds a number that is not finite (shown as 0): " + st.Message
	if data, err = json.Marshal(st); err != nil {
		st = wire.JobStatus{Job: forecast.JobRequest{ID: st.Job.ID}, State: st.State, Message: "record not renderable"}
		data, _ = json.Marshal(st)
	}
	return st, data
}

func finite(f float64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}
