package forecast

import (
	"encoding/json"
	"fmt"
	"io"
)

func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	// Token, not More: More reports false for a stray '}' or ']'.
	if _, err := dec.Token(); err != io.EOF {
		return invalid("trailing data after the JSON value")
	}
	return nil
}

// DecodeForecast reads one v1 forecast and validates it.
func DecodeForecast(r io.Reader) (*Forecast, error) {
	var f Forecast
	if err := decodeStrict(r, &f); err != nil {
		return nil, fmt.Errorf("decode forecast: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// DecodeJobs reads a JSON array of v1 job requests and validates each; an
// error names the index of the first bad job.
func DecodeJobs(r io.Reader) ([]JobRequest, error) {
	var jobs []JobRequest
	if err := decodeStrict(r, &jobs); err != nil {
		return nil, fmt.Errorf("decode jobs: %w", err)
	}
	seen := map[string]int{}
	for i := range jobs {
		if err := jobs[i].Validate(); err != nil {
			return nil, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		if jobs[i].ID == "" {
			return nil, fmt.Errorf("jobs[%d]: %w", i, invalid("id: empty"))
		}
		if j, dup := seen[jobs[i].ID]; dup {
			return nil, fmt.Errorf("jobs[%d]: %w", i, invalid("id %q duplicates jobs[%d]", jobs[i].ID, j))
		}
		seen[jobs[i].ID] = i
	}
	return jobs, nil
}

// DecodeJob reads one v1 job request and validates it.
func DecodeJob(r io.Reader) (*JobRequest, error) {
	var j JobRequest
	if err := decodeStrict(r, &j); err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return &j, nil
}
