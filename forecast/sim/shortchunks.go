package sim

// A job of whole chunks per node (PPN > 1) starting now under
// LASTAVAILABLE may be started by Maui 3.3.1 on fewer tasks than it asks
// for, where node policies cap a node at a count that is not a whole
// number of chunks. How (read in MNode.c and MSched.c of marc0f/maui
// da3b0358, then seen with LOGLEVEL 7 in nodeheld2 at +0 s):
//
//   - MNodeSelectIdleTasks gives each feasible node the tasks
//     min(TC, FNL.TC): TC from MJobCheckNRes → MJobGetNRange (the node's
//     range — on a node with no reservation its job slots, nodelimits.go —
//     rounded down to whole chunks: n033, MAXPROC 3, gives 2 at nodeheld2
//     +75959 s), FNL.TC from MJobGetINL →
//     MNodeCheckPolicies (what MAXPROC and MAXPROCPERUSER allow, not
//     rounded). It checks the job against the sum of those counts rounded
//     down to whole chunks (ATC) — but under LASTAVAILABLE it then sorts
//     the nodes by availability and copies the counts back *before*
//     rounding (MPN[].TC), so the list it hands on is not rounded.
//   - MJobAllocMNL (mnalLastAvailable) takes nodes from that list, each
//     with at least one chunk (MinTPN), for min(count, the job's tasks),
//     until the counts make up the job's tasks.
//   - MJobDistributeTasks rounds each node down to whole chunks and caps
//     it at what is still missing; the job starts on that (MJobStart does
//     not check the total). j0012 (60 tasks of 2 per node, NODECFG[DEFAULT]
//     MAXPROC=7): n034 5 → 4, n033 2, n032…n025 7 or 6 → 6, so 54 tasks.
//
// Other allocation policies keep the rounded counts (MNodeSelectIdleTasks
// rounds NodeList[].TC for them), so the job gets all its tasks or does not
// start; without node policies a node's count from MNodeCheckPolicies is
// its free processors, never below its rounded range count, so nothing is
// short either. Maui keeps counting the job's tasks as asked in its usage
// and fairshare (MJobGetProcCount: RQ->TaskCount is not changed) and in
// MBFBestFit's offer; its nodes hold only what it was given.

// shortChunks reports whether j, starting now, is allocated as above
// (pickChunks) and may get fewer processors than it asks for.
func (e *Engine) shortChunks(j *job) bool {
	return j.PPN > 1 && e.nlim != nil && e.policy.NodeAlloc == LastAvailable && !e.policy.ExactNode
}

// chunkCand is a node pickChunks may take: its count before rounding.
type chunkCand struct{ i, tc int }

// pickChunks is pick for a job shortChunks allows short, over the nodes
// in order (in: those allowed, nil all; prefer: those taken first): false
// when their counts rounded down to whole chunks do not make up the job.
func (e *Engine) pickChunks(j *job, end int64, order []int, in func(int) bool, prefer []int) ([]hostUse, bool) {
	cands := e.chunkBuf[:0]
	defer func() { e.chunkBuf = cands[:0] }()
	whole := 0
	for i := range e.pickWalk(j, order, in, prefer) {
		f := e.nodeFree(i, end)
		if e.quietFrom(i, e.now) {
			f = e.idleTasks(i, f) // a quiet node's range counts its job slots
		}
		tc := e.nodeAllowsFrom(j, i, end, f-f%j.PPN) // MIN(TC, FNL.TC)
		if tc < j.PPN {
			continue // no chunk (MinTPN)
		}
		cands = append(cands, chunkCand{i, tc})
		whole += tc - tc%j.PPN
	}
	if whole < j.Procs {
		return nil, false // ATC < the job's tasks
	}
	var hosts []hostUse
	need, got := j.Procs, 0
	for _, c := range cands {
		if take := min(c.tc-c.tc%j.PPN, need); take > 0 {
			hosts = append(hosts, hostUse{node: c.i, procs: take})
			need -= take
		}
		if got += min(c.tc, j.Procs); got >= j.Procs {
			break
		}
	}
	return hosts, true
}
