package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// checkScalar says what is wrong with text as a value of kind k, or nil.
// number is true when the text was written as a YAML number (not quoted).
func checkScalar(k kind, text string, number bool) error {
	switch k {
	case kindDuration:
		return checkDuration(text, number)
	case kindBool:
		if _, err := strconv.ParseBool(text); err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
	case kindInt:
		if _, err := strconv.ParseInt(text, 0, 64); errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range (at most %d)", text, int64(math.MaxInt64))
		} else if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
	case kindUint:
		if _, err := strconv.ParseUint(text, 0, 64); errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range (at most %d)", text, uint64(math.MaxUint64))
		} else if err != nil {
			return fmt.Errorf("%q is not a non-negative integer", text)
		}
	case kindFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a finite number", text)
		}
	case kindStruct, kindMap, kindSlice:
		return fmt.Errorf("%q: must be %s", text, k)
	}
	return nil
}

// checkDuration accepts Go durations with a unit ("90s", "1h30m") and a
// bare 0. A bare number is refused: Go would read it as nanoseconds.
func checkDuration(text string, number bool) error {
	t := strings.TrimSpace(text)
	if t == "0" {
		return nil
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil || number {
		return fmt.Errorf("%s has no unit (it would be %s nanoseconds): write e.g. %ss, %sm or %sh", t, t, t, t, t)
	}
	if _, err := time.ParseDuration(t); err != nil {
		return fmt.Errorf("%q is not a duration: write e.g. 500ms, 30s, 10m, 24h or 1h30m", text)
	}
	return nil
}
