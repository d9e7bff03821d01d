package swf

import (
	"fmt"
	"strings"
)

// LeftOut says, for people, how many of a trace's records were left out
// and why, with the first three: "left out 135 of 2000 records (0
// malformed lines, 135 whose processors or run time the archive marks
// missing); e.g. line 90: run time missing (-1); …". records counts every
// record read, the skipped ones included; "" when none was left out.
func LeftOut(records int, skips []Skip) string {
	if len(skips) == 0 {
		return ""
	}
	bad := 0
	for _, s := range skips {
		if s.Malformed {
			bad++
		}
	}
	return fmt.Sprintf("left out %d of %d records (%d malformed lines, %d whose processors or run time the archive marks missing)%s",
		len(skips), records, bad, len(skips)-bad, Examples(skips))
}

// Examples names the first three records left out with their reasons:
// "; e.g. line 2: 3 fields, want 18; line 5: …" ("" for none).
func Examples(skips []Skip) string {
	var b strings.Builder
	for i, s := range skips[:min(3, len(skips))] {
		sep := "; e.g. "
		if i > 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%sline %d: %s", sep, s.Line, s.Reason)
	}
	return b.String()
}

// NoUsableJob is the error of a trace whose every record was left out
// (nil when some job is usable or nothing was read).
func NoUsableJob(jobs int, skips []Skip) error {
	if jobs > 0 || len(skips) == 0 {
		return nil
	}
	return fmt.Errorf("no usable job record: all %d records left out%s", len(skips), Examples(skips))
}
