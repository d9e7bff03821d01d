package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

const readChunk = 64 << 10

// readLines hands on every complete line of tr from its offset, recording
// each line's end once the handler accepted it. A partial last line is
// left for a later pass.
func (t *Tailer) readLines(ctx context.Context, tr *tracked) error {
	buf := make([]byte, 0, readChunk)
	skipping := false // inside a line longer than MaxLine
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := tr.pos.Offset + int64(len(buf))
		n, err := readMore(tr, &buf, start)
		if err != nil {
			return err
		}
		consumed, err := t.handleLines(ctx, tr, buf, &skipping)
		if err != nil {
			return err
		}
		buf = append(buf[:0], buf[consumed:]...)
		if len(buf) > t.cfg.MaxLine && !skipping {
			skipping = true
			t.stats.LongLines.Add(1)
		}
		if skipping && len(buf) > 0 {
			t.advance(tr, int64(len(buf))) // drop the overlong line's bytes
			buf = buf[:0]
		}
		if n == 0 {
			return nil
		}
	}
}

func readMore(tr *tracked, buf *[]byte, at int64) (int, error) {
	b := *buf
	if cap(b)-len(b) < readChunk/2 {
		nb := make([]byte, len(b), 2*cap(b)+readChunk)
		copy(nb, b)
		b = nb
	}
	n, err := tr.f.ReadAt(b[len(b):cap(b)], at)
	*buf = b[:len(b)+n]
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("tail %s: %w", tr.path, err)
	}
	return n, nil
}

// handleLines hands on the complete lines at the start of buf and returns
// how many bytes they took.
func (t *Tailer) handleLines(ctx context.Context, tr *tracked, buf []byte, skipping *bool) (int, error) {
	done := 0
	for {
		i := bytes.IndexByte(buf[done:], '\n')
		if i < 0 {
			return done, nil
		}
		line := buf[done : done+i]
		if *skipping || len(line) > t.cfg.MaxLine {
			if !*skipping {
				t.stats.LongLines.Add(1) // arrived whole in one read
			}
			*skipping = false
			t.advance(tr, int64(i+1))
			done += i + 1
			continue
		}
		if err := t.handleOne(ctx, tr, line); err != nil {
			return done, err
		}
		done += i + 1
	}
}

func (t *Tailer) handleOne(ctx context.Context, tr *tracked, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := LineID{File: tr.key(), Offset: tr.pos.Offset}
	err := t.handle(ctx, Line{ID: id, Path: tr.path, Text: line})
	skipped := errors.Is(err, Skip)
	if err != nil && !skipped {
		return fmt.Errorf("tail %s offset %d: %w", tr.path, id.Offset, err)
	}
	if t.crash != nil && t.crash("handled") {
		return errCrash
	}
	t.advance(tr, int64(len(line)+1))
	t.stats.Lines.Add(1)
	t.stats.Bytes.Add(int64(len(line) + 1))
	if skipped {
		t.stats.Skipped.Add(1)
		return nil // recorded with the next write: redoing it is invisible
	}
	t.pending++
	return t.commit(false)
}

// advance records that n more bytes of tr were dealt with.
func (t *Tailer) advance(tr *tracked, n int64) {
	tr.pos.Offset += n
	t.dirty = true
}
