package torque

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"lookahead/torque/tail"
)

// JobEnd is when a job ended, from its accounting E record (or, without
// one, the D or A record that deleted or aborted it).
type JobEnd struct {
	Job        string
	End        int64 // epoch seconds: the E record's end=, else the record's time
	ExitStatus *int  // Exit_status of the E record; nil without one
}

// AccountingEnds finds job ends in pbs_server's accounting directory.
type AccountingEnds struct {
	// Dir is $PBS_HOME/server_priv/accounting.
	Dir string
	// Location is the zone of the records' times (default time.Local).
	Location *time.Location
	// Files bounds how many of the newest accounting files are read
	// (default 14: two weeks of day files).
	Files int
}

// Ends reads the newest accounting files for the end of each job in ids.
// Jobs without an ending record are absent from the result; lines that do
// not parse are skipped (they are not these jobs' records).
func (a AccountingEnds) Ends(ids []string) (map[string]JobEnd, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := map[string]JobEnd{}
	if len(want) == 0 {
		return out, nil
	}
	files, err := a.newest()
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		if err := a.scan(p, want, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (a AccountingEnds) newest() ([]string, error) {
	des, err := os.ReadDir(a.Dir)
	if err != nil {
		return nil, fmt.Errorf("accounting %s: %w", a.Dir, err)
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && tail.DayFiles.MatchString(de.Name()) {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	n := a.Files
	if n <= 0 {
		n = 14
	}
	names = names[max(0, len(names)-n):]
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = filepath.Join(a.Dir, name)
	}
	return paths, nil
}

func (a AccountingEnds) scan(path string, want map[string]bool, out map[string]JobEnd) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("accounting %s: %w", path, err)
	}
	defer f.Close()
	loc := a.Location
	if loc == nil {
		loc = time.Local
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rec, err := ParseAcctLine(sc.Text(), loc)
		if err != nil || !want[rec.Job] {
			continue
		}
		if end, ok := jobEnd(rec); ok && (rec.Type == 'E' || out[rec.Job].End == 0) {
			out[rec.Job] = end
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("accounting %s: %w", path, err)
	}
	return nil
}

// jobEnd reads an ending record: E (end=, Exit_status=), D or A.
func jobEnd(rec AcctRecord) (JobEnd, bool) {
	switch rec.Type {
	case 'E':
		e := JobEnd{Job: rec.Job, End: rec.Time.Unix()}
		if v, err := strconv.ParseInt(rec.Fields["end"], 10, 64); err == nil && v > 0 {
			e.End = v
		}
		if v, err := strconv.Atoi(rec.Fields["Exit_status"]); err == nil {
			e.ExitStatus = &v
		}
		return e, true
	case 'D', 'A':
		return JobEnd{Job: rec.Job, End: rec.Time.Unix()}, true
	}
	return JobEnd{}, false
}
