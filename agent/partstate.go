package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// partStateFile is what Config.PartState holds: the parts this agent
// dispatched (local job id → grid job) and what it reported of each.
type partStateFile struct {
	Version    int               `json:"version"`
	Dispatched map[string]string `json:"dispatched"`
	Reported   map[string]string `json:"reported"`
}

const partStateVersion = 1

// loadPartState reads Config.PartState once (caller holds resMu). A
// missing file is an empty state; an unreadable one is logged (parts
// dispatched before are then not followed: they are not this agent's).
func (a *Agent) loadPartState() {
	if a.parts.loaded {
		return
	}
	a.parts.loaded = true
	a.parts.dispatched, a.parts.reported = map[string]string{}, map[string]string{}
	if a.cfg.PartState == "" {
		return
	}
	data, err := os.ReadFile(a.cfg.PartState)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var st partStateFile
	if err == nil {
		err = json.Unmarshal(data, &st)
		if err == nil && st.Version != partStateVersion {
			err = fmt.Errorf("version %d, want %d", st.Version, partStateVersion)
		}
	}
	if err != nil {
		a.log.Warn().Err(err).Str("file", a.cfg.PartState).Msg("dispatched parts not read: parts dispatched before are not followed")
		return
	}
	for id, job := range st.Dispatched {
		a.parts.dispatched[id] = job
	}
	for id, s := range st.Reported {
		a.parts.reported[id] = s
	}
}

// savePartState writes the dispatched parts and what was reported
// (caller holds resMu).
func (a *Agent) savePartState() {
	err := writeJSONFile(a.cfg.PartState, partStateFile{Version: partStateVersion, Dispatched: a.parts.dispatched, Reported: a.parts.reported})
	if err != nil {
		a.log.Warn().Err(err).Str("file", a.cfg.PartState).Msg("dispatched parts not written")
	}
}

// recordDispatched remembers a part the agent submitted (caller holds
// resMu): written before the dispatch is answered.
func (a *Agent) recordDispatched(localID, job string) {
	a.loadPartState()
	if a.parts.dispatched[localID] == job {
		return
	}
	a.parts.dispatched[localID] = job
	a.savePartState()
}
