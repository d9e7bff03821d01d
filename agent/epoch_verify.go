package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/wire"
)

// Epoch verification (docs/broker.md, "Active and standby brokers"): a
// broker's epoch is the job stream sequence of the term record that began
// its term, so no broker can hold an epoch above the last term record on
// wire.JobEpochSubject. Before an epoch may raise the site's fence, the
// agent reads that record; an epoch above it is refused (invalid), so a
// forged request cannot fence the site against the real brokers.

// termRecord is what the agent reads of a term record (the broker's
// epochRecord): a copy the active broker appends after a snapshot, so a
// purge cannot remove the last one, names the epoch it continues.
type termRecord struct {
	Type  string `json:"type"`
	Epoch uint64 `json:"epoch,omitempty"`
}

// errNoTermRecord: the job stream holds no term record (no broker with
// epochs ever began a term on it).
var errNoTermRecord = errors.New("no term record on the job stream")

// lastTermReader reads the highest epoch a broker can hold now.
type lastTermReader func(ctx context.Context) (uint64, error)

// lastTerm reads the last term record with a direct get of its subject
// (the only job stream message an agent may read: grid.conf grants
// $JS.API.DIRECT.GET.LOOKAHEAD_JOBS.lookahead.jobs.$epoch and nothing
// else of the stream). The epoch it allows is the record's sequence, or
// the epoch a copy names when that is lower.
func lastTerm(nc *nats.Conn, js jetstream.JetStream) lastTermReader {
	subject := apiPrefix(js) + "DIRECT.GET." + wire.JobStream + "." + wire.JobEpochSubject
	return func(ctx context.Context) (uint64, error) {
		msg, err := nc.RequestWithContext(ctx, subject, nil)
		if errors.Is(err, nats.ErrNoResponders) {
			return 0, fmt.Errorf("read the last term record: the job stream %s does not answer direct gets (run `lookahead-broker init` as the NATS admin once: it allows them): %w", wire.JobStream, err)
		}
		if err != nil {
			return 0, fmt.Errorf("read the last term record on %s: %w", wire.JobStream, err)
		}
		if status := msg.Header.Get("Status"); status != "" {
			if status == "404" {
				return 0, errNoTermRecord
			}
			return 0, fmt.Errorf("read the last term record on %s: status %s %s", wire.JobStream, status, msg.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(msg.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read the last term record on %s: no sequence in the answer", wire.JobStream)
		}
		var rec termRecord
		if json.Unmarshal(msg.Data, &rec) == nil && rec.Epoch > 0 && rec.Epoch < seq {
			return rec.Epoch, nil
		}
		return seq, nil
	}
}

// apiPrefix is the JetStream API prefix js sends to (a domain's when it
// has one).
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return jetstream.DefaultAPIPrefix
}

// verifyEpoch refuses an epoch above the last term record. A record read
// just after a new broker appended it may come from a replica a moment
// behind: an epoch above it is read again a few times before it is
// refused.
func verifyEpoch(ctx context.Context, read lastTermReader, epoch uint64) *Refusal {
	if read == nil {
		return refuse(wire.CodeInternal, "epoch %d not verified: this agent cannot read the job stream's term records; nothing was done", epoch)
	}
	var last uint64
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(try) * 100 * time.Millisecond):
			}
		}
		last, err = read(ctx)
		if err == nil && epoch <= last {
			return nil
		}
	}
	switch {
	case errors.Is(err, errNoTermRecord):
		return refuse(wire.CodeInvalid, "epoch %d: no broker began a term on the job stream (it holds no term record); refused, nothing done", epoch)
	case err != nil:
		return refuse(wire.CodeInternal, "epoch %d not verified, nothing done: %v", epoch, err)
	}
	return refuse(wire.CodeInvalid, "epoch %d: above the last term record on the job stream (epoch %d): no broker began that term; refused, nothing done", epoch, last)
}
