package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"lookahead/forecast/sim"
	"lookahead/maui"
)

// FairshareSource reads a site's fairshare usage at now for a forecast
// (nil: the forecast starts from zero usage). cfg is the site's
// fairshare configuration (never nil).
type FairshareSource func(ctx context.Context, now int64, cfg *sim.Fairshare) (sim.FSState, error)

// ErrNoFairshareData is a source's answer when Maui has recorded no
// fairshare usage for the intervals that count (a fresh site).
var ErrNoFairshareData = errors.New("no fairshare data")

// FairshareFiles reads Maui's own fairshare files, <dir>/FS.<interval
// start> (dir is Maui's STATDIR, <maui.home>/stats by default), as Maui
// reads them when it starts (MFSInitialize): the file of the current
// interval and of the FSDEPTH intervals before it. They are exact
// (processor-seconds with three decimals); the current interval's file is
// as of Maui's last checkpoint (CHECKPOINTINTERVAL, 5 minutes by default),
// so a forecast misses at most that much of the current interval's usage.
func FairshareFiles(dir string) FairshareSource {
	return func(_ context.Context, now int64, cfg *sim.Fairshare) (sim.FSState, error) {
		cur := now - now%cfg.Interval
		files := map[int]maui.FSFile{}
		for slot := 0; slot <= cfg.Depth && slot < 24; slot++ {
			name := filepath.Join(dir, "FS."+strconv.FormatInt(cur-int64(slot)*cfg.Interval, 10))
			f, err := os.Open(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return sim.FSState{}, fmt.Errorf("fairshare file: %w", err)
			}
			ff, err := maui.ParseFSFile(f)
			f.Close()
			if err != nil {
				return sim.FSState{}, fmt.Errorf("%s: %w", name, err)
			}
			files[slot] = ff
		}
		if len(files) == 0 {
			return sim.FSState{}, fmt.Errorf("%s: %w (no FS.<interval> file for the last %d intervals)", dir, ErrNoFairshareData, cfg.Depth+1)
		}
		return StateFromFSFiles(files, cur), nil
	}
}

// fsCredOfFile maps the files' and diagnose -f's credential types.
var fsCredOfFile = map[string]sim.FSCred{
	"user": sim.FSUser, "group": sim.FSGroup, "acct": sim.FSAccount, "qos": sim.FSQOS, "class": sim.FSClass,
	"USER": sim.FSUser, "GROUP": sim.FSGroup, "ACCT": sim.FSAccount, "QOS": sim.FSQOS, "CLASS": sim.FSClass,
}

// StateFromFSFiles is the fairshare state the files give (by slot: 0 the
// current interval, starting at cur; i the interval i back). Pure.
func StateFromFSFiles(files map[int]maui.FSFile, cur int64) sim.FSState {
	st := sim.FSState{Interval: cur}
	for slot, f := range files {
		for _, r := range f.Rows {
			if r.Type == "sched" {
				st.Total.Usage[slot] = r.Usage
				continue
			}
			addUsage(&st, fsCredOfFile[r.Type], r.Name, slot, r.Usage)
		}
	}
	return st
}

func addUsage(st *sim.FSState, k sim.FSCred, name string, slot int, v float64) {
	if st.Cred[k] == nil {
		st.Cred[k] = map[string]*sim.FSUsage{}
	}
	u := st.Cred[k][name]
	if u == nil {
		u = &sim.FSUsage{}
		st.Cred[k][name] = u
	}
	u.Usage[slot] = v
}

// StateFromDiagnose is the fairshare state `diagnose -f` gives at now:
// each interval's total (processor-hours, one decimal) times each
// credential's percentage of it (two decimals). It is the fallback where
// Maui's statistics directory cannot be read: coarse on a young or small
// site (a total below 0.05 processor-hours shows as 0.0), close on a busy
// one. Pure.
func StateFromDiagnose(d maui.FSDiag, now int64) sim.FSState {
	st := sim.FSState{Interval: now - now%max(d.Interval, 1)}
	for c, slot := range d.Columns {
		if c >= len(d.TotalHours) {
			break
		}
		total := d.TotalHours[c] * 3600
		st.Total.Usage[slot] = total
		for _, cr := range d.Creds {
			k, ok := fsCredOfFile[cr.Kind]
			if ok && c < len(cr.Usage) && cr.Usage[c] > 0 {
				addUsage(&st, k, cr.Name, slot, cr.Usage[c]/100*total)
			}
		}
	}
	return st
}

// FairshareDiagnose reads the state with `diagnose -f` (run returns its
// output).
func FairshareDiagnose(run func(ctx context.Context) ([]byte, error)) FairshareSource {
	return func(ctx context.Context, now int64, _ *sim.Fairshare) (sim.FSState, error) {
		out, err := run(ctx)
		if err != nil {
			return sim.FSState{}, fmt.Errorf("diagnose -f: %w", err)
		}
		d, err := maui.ParseDiagnoseFairshare(bytes.NewReader(out))
		if err != nil {
			return sim.FSState{}, err
		}
		return StateFromDiagnose(d, now), nil
	}
}

// FirstFairshare tries the sources in order and returns the first state
// read; when none gives one, the errors of all, which are
// ErrNoFairshareData only when every source said so.
func FirstFairshare(srcs ...FairshareSource) FairshareSource {
	return func(ctx context.Context, now int64, cfg *sim.Fairshare) (sim.FSState, error) {
		var errs []error
		none := true
		for _, s := range srcs {
			st, err := s(ctx, now, cfg)
			if err == nil {
				return st, nil
			}
			errs = append(errs, err)
			none = none && errors.Is(err, ErrNoFairshareData)
		}
		if none {
			return sim.FSState{}, errors.Join(errs...)
		}
		return sim.FSState{}, errors.New(errors.Join(errs...).Error())
	}
}

// withFairshare is the policy seeded with the site's fairshare usage at
// now. A site without recorded usage starts from zero; a source that
// fails leaves zero usage too, and the note says so in the forecast.
func (e BuiltinEngine) withFairshare(ctx context.Context, now int64) (sim.Policy, string) {
	p := e.Policy
	if p.Fairshare == nil || e.Fairshare == nil {
		return p, ""
	}
	st, err := e.Fairshare(ctx, now, p.Fairshare)
	if err != nil {
		if errors.Is(err, ErrNoFairshareData) {
			return p, ""
		}
		return p, fmt.Sprintf("fairshare usage not read (%v): forecast from zero usage", err)
	}
	fs := *p.Fairshare
	fs.Seed = &st
	p.Fairshare = &fs
	return p, ""
}
