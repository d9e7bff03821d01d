package sim

// job is the engine's record of a Job.
type job struct {
	// the fields every pass reads for every queued job come first, in
	// one cache line with Job's Procs and Walltime (a forecast's queue
	// of thousands is scanned several times per pass)
	started bool
	held    bool // has a reservation this pass
	kept    bool // holds a reservation across passes (Highest)
	Job
	seq     int
	arrive  int64 // when it enters the queue
	planned int64 // start in the kept plan
	numID   uint64
	isNum   bool
	start   int64
	end     int64 // actual end: start + min(runtime, walltime)
	wallEnd int64 // start + walltime: what plans assume
	pool    int   // processors held on usable nodes
	hosts   []hostUse
	rseq    int64 // when its reservation was made (started), see nevent
	prio    int64 // Maui priority this pass (Policy.Priority)
	keptRes *blockedRes
	lim     *jobLim    // usage limits' state (Policy.Limits), else nil; &pol.lim
	pol     *jobPolicy // made at the first need
	elig    *nodeSet   // nodes it may use (Features; nodefeat.go), nil: all
}

// jobPolicy is what a job keeps for a site's policy, made at the first
// need (a replay without a priority function or limits has none): its
// priority's parts (Priority.ofJob) and its usage-limit state, together.
type jobPolicy struct {
	pp  prioParts
	lim jobLim
}

func (j *job) policy() *jobPolicy {
	if j.pol == nil {
		j.pol = new(jobPolicy)
	}
	return j.pol
}

// jobLim is a job's state under usage limits: Maui's SystemQueueTime
// (sqt, reset while a hard limit blocks the job), EffQueueDuration (effQD,
// set when a pass selects the job), whether it held a reservation at the
// end of the previous pass (hadRes: then the pass's first limit check skips
// it), whether this pass's priority pass considers it (inPass), and
// whether a limit refused it in the priority pass before IdleJobFound and
// it was reserved (limRes; limB, and whether that is on the profile too:
// limProf).
type jobLim struct {
	sqt, effQD                      int64
	hadRes, inPass, limRes, limProf bool
	limB                            *blockedRes
	resolved                        bool                // creds is set (credUsage.credsOf)
	creds                           [credKinds]*credLim // its credentials' usage and limits
}

// waited is how long j counts as having waited at now under usage
// limits: the effective queue duration of the last pass that selected it,
// else the time since its SystemQueueTime (its submission, or the last
// time a hard limit refused it in a pass's first selection). Maui's
// MJobGetStartPriority (MPriority.c) reads as SubmitTime there unless
// USESYSTEMQUEUETIME is on, but the real Maui 3.3.1 counts from
// SystemQueueTime: on maxps, j0072's queue time was 138 s at +8517 s,
// the time since its reset at +8379 s, not the 155 s since it was
// submitted, and 0 once that pass's first selection reset it again.
func (j *job) waited(now int64) int64 {
	if j.lim != nil && j.lim.effQD > 0 {
		return j.lim.effQD
	}
	if j.lim != nil {
		return max(now-j.lim.sqt, 0)
	}
	return max(now-j.Submit, 0)
}

type hostUse struct {
	node  int
	procs int
}

func newJob(j Job, seq int) *job {
	jb := new(job)
	jb.init(j, seq)
	return jb
}

// init makes *jb a fresh record of j (Submit fills one in place).
func (jb *job) init(j Job, seq int) {
	n, ok := parseUint(j.ID)
	*jb = job{Job: j, seq: seq, numID: n, isNum: ok}
}

func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// before is the queue order: higher priority, then earlier submit, then
// job id (numbers as numbers, numbers before names), then arrival.
func before(a, b *job) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	if c := compareID(a, b); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

func compareID(a, b *job) int {
	switch {
	case a.isNum && b.isNum:
		switch {
		case a.numID < b.numID:
			return -1
		case a.numID > b.numID:
			return 1
		}
		return 0
	case a.isNum:
		return -1
	case b.isNum:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// jobHeap is a binary min-heap of jobs under less.
type jobHeap struct {
	items []*job
	less  func(a, b *job) bool
}

func (h *jobHeap) len() int { return len(h.items) }

func (h *jobHeap) peek() *job { return h.items[0] }

func (h *jobHeap) push(j *job) {
	h.items = append(h.items, j)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *jobHeap) pop() *job {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = nil
	h.items = h.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.less(h.items[l], h.items[m]) {
			m = l
		}
		if r < last && h.less(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			return top
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

func bySubmit(a, b *job) bool {
	if a.arrive != b.arrive {
		return a.arrive < b.arrive
	}
	return a.seq < b.seq
}

func byEnd(a, b *job) bool {
	if a.end != b.end {
		return a.end < b.end
	}
	return a.seq < b.seq
}

func byPlanned(a, b *job) bool {
	if a.planned != b.planned {
		return a.planned < b.planned
	}
	return before(a, b)
}
