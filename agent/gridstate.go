package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"lookahead/torque"
	"lookahead/wire"
)

// JobEndFinder tells when local jobs ended: torque.AccountingEnds reads
// the accounting log's E records. The agent asks it for the local jobs of
// a grid job's part that it reports finished, so the event carries the
// real end, also for a part that ended while the agent was down.
type JobEndFinder interface {
	Ends(ids []string) (map[string]torque.JobEnd, error)
}

// gridStateFile is what Config.GridState holds: the grid jobs whose parts
// the agent last saw running, with their local job ids.
type gridStateFile struct {
	Version int                 `json:"version"`
	Running map[string][]string `json:"running"`
}

const gridStateVersion = 1

// loadGridState reads Config.GridState once, before the first observe: a
// grid job recorded running whose local jobs no longer run is then
// reported finished by that observe (it ended while the agent was down).
// A missing file is an empty state; an unreadable one is logged and
// ignored (the parts then look new, as without a state file).
func (a *Agent) loadGridState() {
	if a.grid.loaded {
		return
	}
	a.grid.loaded = true
	if a.cfg.GridState == "" {
		return
	}
	data, err := os.ReadFile(a.cfg.GridState)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var st gridStateFile
	if err == nil {
		err = json.Unmarshal(data, &st)
		if err == nil && st.Version != gridStateVersion {
			err = fmt.Errorf("version %d, want %d", st.Version, gridStateVersion)
		}
	}
	if err != nil {
		a.log.Warn().Err(err).Str("file", a.cfg.GridState).Msg("grid part state not read: parts that ended while the agent was down are not reported")
		return
	}
	a.grid.running, a.grid.local = map[string]bool{}, st.Running
	for job := range st.Running {
		a.grid.running[job] = true
	}
	a.log.Info().Int("running", len(st.Running)).Str("file", a.cfg.GridState).Msg("grid part state read")
}

// saveGridState writes the tracker's running parts when they changed
// (temporary file, then rename).
func (a *Agent) saveGridState() {
	if a.cfg.GridState == "" || !a.grid.changed {
		return
	}
	data, err := json.Marshal(gridStateFile{Version: gridStateVersion, Running: a.grid.local})
	if err == nil {
		tmp := a.cfg.GridState + ".tmp"
		if err = os.WriteFile(tmp, data, 0o600); err == nil {
			err = os.Rename(tmp, a.cfg.GridState)
		}
	}
	if err != nil {
		a.log.Warn().Err(err).Str("file", a.cfg.GridState).Msg("grid part state not written")
		return
	}
	a.grid.changed = false
}

// stampEnds gives each finished event the latest end of its local jobs
// from the JobEndFinder (the accounting log), when it knows them.
func (a *Agent) stampEnds(evs []wire.JobEvent) {
	if a.deps.JobEnds == nil {
		return
	}
	var ids []string
	for _, local := range a.grid.gone {
		ids = append(ids, local...)
	}
	if len(ids) == 0 {
		return
	}
	ends, err := a.deps.JobEnds.Ends(ids)
	if err != nil {
		a.log.Warn().Err(err).Msg("grid part ends not found in accounting: reported at the time they were noticed")
		return
	}
	for i, ev := range evs {
		if ev.State == "finished" {
			stampEnd(&evs[i], a.grid.gone[ev.Job], ends)
		}
	}
}

// stampEnd gives a finished grid job event the latest end of its local
// jobs and their exit status: the first one not 0 makes it failed, with
// the local job named; all 0 is 0; none recorded leaves it unknown.
func stampEnd(ev *wire.JobEvent, local []string, ends map[string]torque.JobEnd) {
	var last int64
	for _, id := range local {
		e := ends[id]
		last = max(last, e.End)
		if e.ExitStatus == nil || (ev.ExitStatus != nil && *ev.ExitStatus != 0) {
			continue
		}
		ev.ExitStatus = e.ExitStatus
		if *e.ExitStatus != 0 {
			ev.State, ev.LocalID = "failed", id
			ev.Message = fmt.Sprintf("%s exited with status %d", id, *e.ExitStatus)
		}
	}
	if last > 0 {
		ev.Time = last
	}
}
