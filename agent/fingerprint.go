package agent

import (
	"crypto/sha256"
	"encoding/binary"
	"math"

	"lookahead/forecast"
)

// Fingerprint identifies what a forecast says apart from the passage of
// time: two forecasts built at different instants on an unchanged cluster
// differ only in Generated, Horizon, Seq, the start of slots that begin at
// generation time and the end of slots that end at the horizon. Those are
// masked, everything else (nodes, slot shapes, prices, order) is hashed.
// Pure.
func Fingerprint(f *forecast.Forecast) [32]byte {
	h := sha256.New()
	var buf [8]byte
	putInt := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	putStr := func(s string) {
		putInt(int64(len(s)))
		h.Write([]byte(s))
	}
	putStr(f.Site)
	putInt(f.Horizon - f.Generated)
	putInt(int64(len(f.Nodes)))
	for _, n := range f.Nodes {
		putStr(n.Name)
		putInt(int64(n.Procs))
		putInt(int64(math.Float64bits(n.Speed)))
		putInt(n.MemMB)
		putInt(int64(len(n.Features)))
		for _, ft := range n.Features {
			putStr(ft)
		}
	}
	putInt(int64(len(f.Slots)))
	for _, s := range f.Slots {
		start, end := s.Start, s.End
		if start <= f.Generated {
			start = math.MinInt64
		}
		if end >= f.Horizon {
			end = math.MaxInt64
		}
		putStr(s.Node)
		putInt(int64(s.Procs))
		putInt(start)
		putInt(end)
		putInt(int64(math.Float64bits(s.Price)))
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
