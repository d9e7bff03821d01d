package maui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FSDiag is `diagnose -f` (Maui's MFSShow): the fairshare configuration
// and, per credential, its share of the usage.
type FSDiag struct {
	Depth    int     // FSDEPTH
	Interval int64   // FSINTERVAL, seconds
	Decay    float64 // FSDECAY
	Policy   string  // FSPOLICY as Maui names it ("DEDICATEDPS", "NONE"…); a '%' suffix is not shown
	// Columns are the intervals shown (0 the current one, i the interval
	// i back): only those where the total usage is above zero. Weights
	// and TotalHours go with them: FSDECAY^i and the total usage in
	// processor-hours (printed with one decimal).
	Columns    []int
	Weights    []float64
	TotalHours []float64
	Creds      []FSDiagCred
}

// FSDiagCred is one credential row of diagnose -f.
type FSDiagCred struct {
	Kind string // USER, GROUP, ACCT, QOS, CLASS (Maui's headers)
	Name string
	// Off is Maui's '*' after the name: the share is off its target
	// (below a floor, above a ceiling, more than 5 points from a target).
	Off bool
	// Share is the credential's share in percent of all usage as the
	// priority counts it (the current interval plus the decayed past).
	Share float64
	// Target and Mode are the FSTARGET that applies (the credential's or
	// DEFAULT's): Mode "", "+", "-", "^" or "%". HasTarget is false for
	// "-------". Maui prints the target in 7 characters, so a target of
	// 1000 or more loses its modifier (and its decimals) here.
	Target    float64
	Mode      string
	HasTarget bool
	// Usage is the share of each shown interval (Columns) in percent of
	// that interval's total; -1 for "-------" (none).
	Usage []float64
}

// ParseDiagnoseFairshare reads `diagnose -f` (also with -v, which lists
// credentials without usage too).
func ParseDiagnoseFairshare(r io.Reader) (FSDiag, error) {
	ls, err := lines(r)
	if err != nil {
		return FSDiag{}, fmt.Errorf("diagnose -f: %w", err)
	}
	if len(ls) == 0 || ls[0] != "FairShare Information" {
		return FSDiag{}, fmt.Errorf("diagnose -f: no \"FairShare Information\" title (not diagnose -f output?)")
	}
	var d FSDiag
	kind := ""
	for i := 1; i < len(ls); i++ {
		l := ls[i]
		f := strings.Fields(l)
		switch {
		case len(f) == 0, strings.HasPrefix(l, "-------------"), strings.HasPrefix(l, "System FS Settings:"):
		case strings.HasPrefix(l, "Depth:"):
			err = d.header(f)
		case strings.HasPrefix(l, "FS Policy:"):
			d.Policy = strings.TrimSpace(strings.TrimPrefix(l, "FS Policy:"))
		case f[0] == "FSInterval":
			d.Columns, err = intervalColumns(f)
		case f[0] == "FSWeight":
			d.Weights, err = columnValues(f, len(d.Columns))
		case f[0] == "TotalUsage":
			d.TotalHours, err = columnValues(f, len(d.Columns))
		case len(f) == 1 && fsKinds[f[0]]:
			kind = f[0]
		default:
			if kind == "" {
				err = fmt.Errorf("a credential row before any USER, GROUP, ACCT, QOS or CLASS header")
				break
			}
			var c FSDiagCred
			c, err = credRow(kind, f, len(d.Columns))
			d.Creds = append(d.Creds, c)
		}
		if err != nil {
			return FSDiag{}, &lineError{"diagnose -f", i + 1, l, err}
		}
	}
	if d.Depth == 0 || d.Interval == 0 || d.Policy == "" {
		return FSDiag{}, fmt.Errorf("diagnose -f: no Depth/Interval/Decay or FS Policy line")
	}
	return d, nil
}

var fsKinds = map[string]bool{"USER": true, "GROUP": true, "ACCT": true, "QOS": true, "CLASS": true}

// header reads "Depth: 8 intervals   Interval Length: 00:02:00   Decay Rate: 0.80".
func (d *FSDiag) header(f []string) error {
	if len(f) != 9 || f[2] != "intervals" || f[3] != "Interval" || f[6] != "Decay" {
		return fmt.Errorf("want \"Depth: N intervals   Interval Length: D   Decay Rate: X\"")
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return fmt.Errorf("depth %q: not a count", f[1])
	}
	iv, err := ParseDuration(f[5])
	if err != nil || iv <= 0 {
		return fmt.Errorf("interval length %q: not a positive duration", f[5])
	}
	dec, err := strconv.ParseFloat(f[8], 64)
	if err != nil {
		return fmt.Errorf("decay rate %q: not a number", f[8])
	}
	d.Depth, d.Interval, d.Decay = n, iv, dec
	return nil
}

// intervalColumns reads "FSInterval % Target 0 1 3".
func intervalColumns(f []string) ([]int, error) {
	if len(f) < 3 || f[1] != "%" || f[2] != "Target" {
		return nil, fmt.Errorf("want \"FSInterval %% Target\" and interval numbers")
	}
	out := make([]int, 0, len(f)-3)
	for _, s := range f[3:] {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= 24 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("interval %q: not an increasing interval number below 24", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// columnValues reads a row's per-interval numbers after its two
// leading columns ("------- -------" or "100.00 -------").
func columnValues(f []string, n int) ([]float64, error) {
	if len(f) != 3+n {
		return nil, fmt.Errorf("%d values, want one per interval shown (%d)", len(f)-3, n)
	}
	out := make([]float64, n)
	for k, s := range f[3:] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q: not a number", s)
		}
		out[k] = v
	}
	return out, nil
}

// credRow reads "alice*  61.41  40.00  68.03  50.00" (name, share,
// target or -------, one share per interval or -------).
func credRow(kind string, f []string, n int) (FSDiagCred, error) {
	if len(f) != 3+n {
		return FSDiagCred{}, fmt.Errorf("%d fields, want name, share, target and %d intervals", len(f), n)
	}
	c := FSDiagCred{Kind: kind, Name: f[0]}
	if len(c.Name) > 1 && strings.HasSuffix(c.Name, "*") {
		c.Name, c.Off = strings.TrimSuffix(c.Name, "*"), true
	}
	var err error
	if c.Share, err = strconv.ParseFloat(f[1], 64); err != nil {
		return c, fmt.Errorf("share %q: not a number", f[1])
	}
	if f[2] != "-------" {
		num := strings.TrimRight(f[2], "+-^%")
		if len(f[2])-len(num) > 1 {
			return c, fmt.Errorf("target %q: more than one modifier", f[2])
		}
		if c.Target, err = strconv.ParseFloat(num, 64); err != nil {
			return c, fmt.Errorf("target %q: not a number", f[2])
		}
		c.Mode, c.HasTarget = f[2][len(num):], true
	}
	c.Usage = make([]float64, n)
	for k, s := range f[3:] {
		if s == "-------" {
			c.Usage[k] = -1
			continue
		}
		if c.Usage[k], err = strconv.ParseFloat(s, 64); err != nil || c.Usage[k] < 0 {
			return c, fmt.Errorf("interval share %q: not a number", s)
		}
	}
	return c, nil
}

// FSFile is one of the fairshare files Maui keeps in its statistics
// directory, FS.<interval start> (MFSUpdateData): every credential's
// usage in that interval, processor-seconds (DEDICATEDPS and
// UTILIZEDPS) or processor-equivalent-seconds (DEDICATEDPES). Maui writes
// a file when its interval ends and, for the current interval, at every
// checkpoint.
type FSFile struct {
	Duration int64  // the header's FSINTERVAL
	Starting string // the header's time stamp, as Maui printed it (when the file was written)
	Rows     []FSRow
}

// FSRow is one line: Type "user", "group", "acct", "qos", "class" or
// "sched" (the total; Maui also reads "TOTAL").
type FSRow struct {
	Type  string
	Name  string
	Usage float64
}

// ParseFSFile reads an FS.<interval> file as Maui does (MFSLoadDataFile):
// '#' starts a comment, a line is "type name usage", other lines are
// skipped. Only the header and a type Maui does not know are errors here.
func ParseFSFile(r io.Reader) (FSFile, error) {
	ls, err := lines(r)
	if err != nil {
		return FSFile{}, fmt.Errorf("fairshare file: %w", err)
	}
	var out FSFile
	for i, l := range ls {
		if rest, ok := strings.CutPrefix(l, "# FS Data File (Duration:"); ok {
			if err := out.headerLine(rest); err != nil {
				return FSFile{}, &lineError{"fairshare file", i + 1, l, err}
			}
			continue
		}
		body, _, _ := strings.Cut(l, "#")
		f := strings.Fields(body)
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			continue // Maui skips it too
		}
		t := f[0]
		if f[0] == "TOTAL" {
			t = "sched"
		}
		if !fsFileTypes[t] {
			return FSFile{}, &lineError{"fairshare file", i + 1, l, fmt.Errorf("type %q: not user, group, acct, qos, class or sched", f[0])}
		}
		out.Rows = append(out.Rows, FSRow{Type: t, Name: f[1], Usage: v})
	}
	return out, nil
}

var fsFileTypes = map[string]bool{"user": true, "group": true, "acct": true, "qos": true, "class": true, "sched": true}

func (f *FSFile) headerLine(rest string) error {
	dur, stamp, ok := strings.Cut(rest, "seconds)")
	n, err := strconv.ParseInt(strings.TrimSpace(dur), 10, 64)
	if !ok || err != nil || n <= 0 {
		return fmt.Errorf("want \"(Duration: N seconds)  Starting: …\"")
	}
	f.Duration = n
	f.Starting = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stamp), "Starting:"))
	return nil
}
