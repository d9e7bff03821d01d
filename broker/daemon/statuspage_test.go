package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/internal/natsembed"
	"lookahead/wire"
)

// A server whose max_payload is under 128 KiB (here 32 KiB) still answers every status
// page: the jobs of a page were given at least 64 KiB, so with the
// envelope a full page exceeded a smaller max_payload, the reply was
// dropped and `lookahead status` timed out (seen live with max_payload
// 8 KiB and 40 jobs).
func TestStatusPagesUnderSmallMaxPayload(t *testing.T) {
	e := newEnvMaxPayload(t, 32<<10)
	r := e.startBroker(nil)
	const n = 400
	submitWide(t, r.b, n)
	st, err := client.New(connect(t, e.srv), "").Status(context.Background(), "", false)
	if err != nil || st.Code != wire.CodeOK {
		t.Fatalf("status of %d jobs: %v %+v", n, err, st.Message)
	}
	if len(st.Jobs) != n {
		t.Fatalf("status listed %d jobs, want %d", len(st.Jobs), n)
	}
	if pages := r.b.StatusAs(broker.Viewer{All: true}, wire.StatusRequest{}); pages.Next == 0 {
		t.Fatalf("%d jobs in one page: the test tests nothing", len(pages.Jobs))
	}
}

// newEnvMaxPayload is newEnv on a server whose max_payload is bytes.
func newEnvMaxPayload(t *testing.T, bytes int) *env {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "max_payload: %d\n", bytes), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, natsembed.Options{ConfigFile: conf})
	if e.nc.MaxPayload() != int64(bytes) {
		t.Fatalf("max_payload %d, want %d", e.nc.MaxPayload(), bytes)
	}
	return e
}

// submitWide submits n jobs whose status is long (eight features each),
// ids k0, k1, ...
func submitWide(t *testing.T, b *Broker, n int) {
	t.Helper()
	for i := range n {
		j := job(8, 3600, 1)
		j.Features = []string{"infiniband", "gpu", "bigmem", "scratch", "avx512", "local-ssd", "rack-a", "rack-b"}
		if rep := submit(t, b, fmt.Sprintf("k%d", i), j); rep.Code != wire.CodeOK {
			t.Fatalf("submit %d: %+v", i, rep)
		}
	}
}

func TestStatusPageBytes(t *testing.T) {
	for _, c := range []struct {
		max  int64
		want int
	}{{1 << 20, 1<<20 - 64<<10}, {256 << 10, 192 << 10}, {64 << 10, 48 << 10}, {8 << 10, 6 << 10}} {
		if got := statusPageBytes(c.max); got != c.want {
			t.Errorf("max_payload %d: page %d, want %d", c.max, got, c.want)
		}
	}
}
