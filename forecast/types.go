package forecast

// Version is the only contract version this code reads and writes.
const Version = 1

// Criterion names how the planner ranks the feasible allocations of a job
// (docs/formats.md, "The criterion").
const (
	EarliestStart  = "earliest-start"
	EarliestFinish = "earliest-finish"
	// LeastHeld: among the allocations that finish within the planner's
	// tolerance of the earliest finish, the one that holds the fewest
	// processor-seconds, then the earliest finish, then the fewest sites,
	// then the cheapest.
	LeastHeld = "least-held"
	// FreeFirst: least-held over free time first. The allocations that
	// take only the grid's cheapest slots (free time: the lowest price in
	// the forecasts) come first when they finish within the planner's free
	// tolerance of the earliest finish; least-held ranks within them, or
	// among all when free time alone cannot finish by then. The default
	// for a request that omits criterion.
	FreeFirst = "free-first"
	// Cheapest: the cheapest allocation that finishes by the job's
	// deadline, or without one within the planner's free tolerance of the
	// earliest finish; free time (each owner's idle time) first, as
	// free-first; when nothing finishes by the deadline, the earliest
	// finish.
	Cheapest = "cheapest"
)

// DefaultCriterion is the criterion of a request that omits one.
const DefaultCriterion = FreeFirst

// Criteria lists the valid criteria, the default first.
func Criteria() []string {
	return []string{FreeFirst, LeastHeld, EarliestStart, EarliestFinish, Cheapest}
}

// IsCriterion reports whether c names a criterion ("" does not).
func IsCriterion(c string) bool {
	return c == LeastHeld || c == FreeFirst || c == EarliestStart || c == EarliestFinish || c == Cheapest
}

// Node is a compute node a site offers to the grid. Speed is relative to the
// reference CPU (1.0); walltimes are stated on the reference CPU.
type Node struct {
	Name     string   `json:"name"`
	Procs    int      `json:"procs"`
	Speed    float64  `json:"speed"`
	MemMB    int64    `json:"mem_mb"`
	Features []string `json:"features,omitempty"`
}

// Slot says that Procs processors of Node may be used by a grid job over
// [Start, End) at Price credits per CPU-hour. Slots of one node may overlap
// or abut: at any instant the usable processors of a node are the sum of
// Procs over its slots that contain that instant.
type Slot struct {
	Node  string  `json:"node"`
	Procs int     `json:"procs"`
	Start int64   `json:"start"`
	End   int64   `json:"end"`
	Price float64 `json:"price"`
}

// Forecast is what an agent publishes for its site: the nodes and the
// priced slots of the site's future up to Horizon, generated at Generated.
// Seq grows with every forecast a site publishes (the forecast revision).
type Forecast struct {
	Version   int    `json:"version"`
	Site      string `json:"site"`
	Seq       uint64 `json:"seq"`
	Generated int64  `json:"generated"`
	Horizon   int64  `json:"horizon"`
	Nodes     []Node `json:"nodes"`
	Slots     []Slot `json:"slots"`
	// Unmodelled (optional) lists what the forecaster could not follow of
	// the site's scheduling policy (maui.cfg settings the built-in
	// simulator does not model), one line each, for people to read.
	Unmodelled []string `json:"unmodelled,omitempty"`
	// FreePrice (optional) is the owner's price for free time, its
	// pricing's base: slots at or below it are the site's idle time, dearer
	// ones time a queued local job is forecast to hold. 0 (omitted) means
	// not stated: a planner then takes the site's lowest slot price
	// (docs/formats.md, "The owner's free price").
	FreePrice float64 `json:"free_price,omitempty"`
	// RunsParts (optional) says whether the site's agent runs grid jobs'
	// parts (its dispatch is on): a job with a script may be planned only
	// where it does. nil (omitted) means not stated, an agent older than
	// the field: see TakesParts (docs/formats.md, "Sites that run parts").
	RunsParts *bool `json:"runs_parts,omitempty"`
}

// TakesParts reports whether a job whose parts the broker dispatches may
// be planned on the site: its agent says it runs parts, or says nothing
// (an older agent, planned for such jobs as before the field).
func (f *Forecast) TakesParts() bool { return f.RunsParts == nil || *f.RunsParts }

// JobRequest is a grid job as a grid user submits it (v1). Walltime is on
// the reference CPU; MaxPrice is in credits per CPU-hour; MaxSites 0 means
// any number of sites.
type JobRequest struct {
	ID        string   `json:"id"`
	Procs     int      `json:"procs"`
	Walltime  int64    `json:"walltime"`
	MaxPrice  float64  `json:"max_price"`
	MinSpeed  float64  `json:"min_speed"`
	MemMB     int64    `json:"mem_mb"`
	Features  []string `json:"features"`
	Criterion string   `json:"criterion"`
	MaxSites  int      `json:"max_sites"`
	User      string   `json:"user"`
	Account   string   `json:"account"`
	Submitted int64    `json:"submitted"`
	// Deadline (optional, Unix seconds; 0: none) is when the user needs the
	// job finished: criterion cheapest takes the cheapest allocation that
	// finishes by then, free-first waits for free time only until then.
	Deadline int64 `json:"deadline,omitempty"`
}

// Part is the share of an allocation held on one node of one site. Cost
// (optional) is what the part's processors cost over the allocation's
// interval: the parts' costs add up to the allocation's, and each one is
// what the site's owner earns from it.
type Part struct {
	Site  string  `json:"site"`
	Node  string  `json:"node"`
	Procs int     `json:"procs"`
	Cost  float64 `json:"cost,omitempty"`
}

// Allocation is the planner's answer for one job: every part is held over
// [Start, End). When nothing fits within the horizon, Error says why and the
// other fields are zero.
type Allocation struct {
	Job   string  `json:"job"`
	Start int64   `json:"start,omitempty"`
	End   int64   `json:"end,omitempty"`
	Parts []Part  `json:"parts,omitempty"`
	Cost  float64 `json:"cost,omitempty"`
	Error string  `json:"error,omitempty"`
	// Why (optional) says, for people, why the planner chose this
	// allocation over the others its criterion weighed.
	Why string `json:"why,omitempty"`
}

// Placed reports whether the allocation holds processors.
func (a Allocation) Placed() bool { return a.Error == "" && len(a.Parts) > 0 }

// Sites lists the distinct sites of the allocation's parts, in part order.
func (a Allocation) Sites() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range a.Parts {
		if !seen[p.Site] {
			seen[p.Site] = true
			out = append(out, p.Site)
		}
	}
	return out
}
