package torque

import (
	"context"
	"errors"
	"fmt"
)

// ExitNotHeld is qrls' exit status for a job that holds no hold of the
// type asked (captured on 6.1.3: "The requested state or substate can't
// be set from the job's current state").
const ExitNotHeld = 70

// Hold puts an operator hold on job id (`qhold -h o`): Maui leaves a held
// job alone, and only an operator or manager can release it (the job's
// user cannot). Torque accepts it on a running job too, where it changes
// nothing until the job is requeued. A job Torque no longer knows wraps
// ErrUnknownJob.
func (b *Batch) Hold(ctx context.Context, id string) ([]string, error) {
	return b.holdCmd(ctx, b.cfg.Qhold, id)
}

// Unhold releases the operator hold of job id (`qrls -h o`). A job that
// has none (exit 70) or that Torque no longer knows is not an error:
// there is nothing left to release.
func (b *Batch) Unhold(ctx context.Context, id string) ([]string, error) {
	argv, err := b.holdCmd(ctx, b.cfg.Qrls, id)
	if Gone(err) || exitIs(err, ExitNotHeld) {
		return argv, nil
	}
	return argv, err
}

func (b *Batch) holdCmd(ctx context.Context, tool, id string) ([]string, error) {
	if !looksLikeJobID(id) {
		return nil, fmt.Errorf("%s on %s: %w: job id %q", tool, b.cfg.Site, ErrBadSpec, id)
	}
	target := id
	if b.cfg.Server != "" {
		target += "@" + b.cfg.Server
	}
	args := []string{"-h", "o", target}
	argv := append([]string{tool}, args...)
	res, err := b.run.RunInput(ctx, nil, tool, args...)
	if err != nil {
		return argv, fmt.Errorf("%s on %s: %w", tool, b.cfg.Site, err)
	}
	if err := ClassifyExit(tool, args, res); err != nil {
		return argv, fmt.Errorf("%s on %s: %w", tool, b.cfg.Site, err)
	}
	return argv, nil
}

func exitIs(err error, code int) bool {
	var ce *CommandError
	return errors.As(err, &ce) && ce.ExitCode == code
}
