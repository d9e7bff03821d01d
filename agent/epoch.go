package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"lookahead/wire"
)

// epochGuard fences brokers that are no longer active: it keeps the
// highest broker epoch this site has seen (docs/broker.md, "Active and
// standby brokers") and refuses a reserve, release, dispatch or stop
// request that carries an older one — or none, once an epoch was seen —,
// and one that carries a newer epoch than the job stream's last term
// record (epoch_verify.go).
// The highest is written to its file (when set) before the request that
// raised it is served, so a restarted agent fences as before. Requests
// are checked under the agent's resMu, in the order they are served.
type epochGuard struct {
	mu      sync.Mutex
	path    string
	loaded  bool
	highest uint64
	// verify reads the highest epoch a broker can hold (epoch_verify.go);
	// nil: no epoch can be verified, none raises the highest.
	verify lastTermReader
}

// admit checks a request's epoch and raises the highest seen, once the
// job stream shows a broker began that term; a refusal is CodeFenced (an
// older epoch), CodeInvalid (an epoch no broker holds), or CodeInternal
// when the highest cannot be read or kept, or the epoch not verified.
func (g *epochGuard) admit(ctx context.Context, epoch uint64) *Refusal {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.load(); err != nil {
		return refuse(wire.CodeInternal, "nothing done: %v", err)
	}
	if ref := fence(epoch, g.highest); ref != nil {
		return ref
	}
	if epoch > g.highest {
		if ref := verifyEpoch(ctx, g.verify, epoch); ref != nil {
			return ref
		}
		if err := g.save(epoch); err != nil {
			return refuse(wire.CodeInternal, "nothing done: %v", err)
		}
		g.highest = epoch
	}
	return nil
}

// fence is the rule: an epoch older than the highest seen is refused; a
// request without one (a broker before epochs) passes only while no
// epoch was ever seen.
func fence(epoch, highest uint64) *Refusal {
	if epoch < highest {
		return refuse(wire.CodeFenced, "request of broker epoch %d, this site has seen epoch %d: its sender is no longer the active broker; nothing was done", epoch, highest)
	}
	return nil
}

func (g *epochGuard) load() error {
	if g.loaded || g.path == "" {
		g.loaded = true
		return nil
	}
	data, err := os.ReadFile(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		g.loaded = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the highest broker epoch: %w", err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return fmt.Errorf("the highest broker epoch in %s: %w (remove the file only if no older broker can still be running)", g.path, err)
	}
	g.highest, g.loaded = n, true
	return nil
}

// save writes the epoch durably: a temporary file, synced, renamed.
func (g *epochGuard) save(epoch uint64) error {
	if g.path == "" {
		return nil
	}
	tmp := g.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("keep the highest broker epoch: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d\n", epoch)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, g.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(g.path))
	}
	if err != nil {
		return fmt.Errorf("keep the highest broker epoch in %s: %w", g.path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
