package forecast

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DecodeStrictJSON decodes one JSON value from r into v as the v1
// decoders do: unknown fields and trailing data are refused, a syntax or
// type error names its line and column; errors wrap ErrInvalid.
func DecodeStrictJSON(r io.Reader, v any) error { return decodeStrict(r, v) }

func decodeStrict(r io.Reader, v any) error {
	seen := &prefix{max: positionBytes}
	dec := json.NewDecoder(io.TeeReader(r, seen))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, located(err, seen))
	}
	// Token, not More: More reports false for a stray '}' or ']'.
	if _, err := dec.Token(); err != io.EOF {
		return invalid("trailing data after the JSON value")
	}
	return nil
}

// positionBytes is how much of an input decodeStrict keeps to tell the
// line and column of an error; past it an error gives its byte offset
// (the input is a machine's then, and memory stays bounded for the wire).
const positionBytes = 1 << 20

// prefix keeps the first max bytes written to it and counts the rest.
type prefix struct {
	buf bytes.Buffer
	n   int64
	max int
}

func (p *prefix) Write(b []byte) (int, error) {
	if room := p.max - p.buf.Len(); room > 0 {
		p.buf.Write(b[:min(room, len(b))])
	}
	p.n += int64(len(b))
	return len(b), nil
}

// located prefixes a JSON error that knows its byte offset with the line
// and column of that offset in the input (the offending byte of a syntax
// error, the end of the value of a type error), or with the offset alone
// past the kept prefix.
func located(err error, seen *prefix) string {
	data := seen.buf.Bytes()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &syn):
		off = max(syn.Offset-1, 0) // Offset counts the offending byte

	case errors.As(err, &typ):
		off = typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = seen.n
	}
	switch {
	case off < 0:
		return err.Error()
	case off > int64(len(data)):
		return fmt.Sprintf("byte %d: %v", off, err)
	}
	line, col := Position(data, off)
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// Position is the 1-based line and column (in bytes) of offset off in data.
func Position(data []byte, off int64) (line, col int) {
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
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
	if err := f.CheckCapacity(); err != nil {
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
