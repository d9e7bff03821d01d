package coalloc

import (
	"cmp"
	"slices"
)

// event is one edge of a piece: procs is +q at the start of a q-processor
// piece and -q at its end (signs swap for negative pieces). The node's
// class and the rank of the piece's price (its index in Pool.prices) ride
// along so that the sweep's suitability test touches no other memory.
type event struct {
	at    int64
	node  int32
	procs int32
	class int32
	rank  int32
}

func eventCmp(a, b event) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.node, b.node)
}

// chunkMax bounds a chunk of the event list: an insertion moves at most
// this many events, and iteration stays a plain walk over arrays.
const chunkMax = 2048

// eventList is every piece edge in (time, node) order, kept in chunks so
// that placements can insert their edges without moving the whole list.
// No chunk is empty.
type eventList struct {
	chunks [][]event
	n      int
}

func newEventList(sorted []event) eventList {
	l := eventList{n: len(sorted)}
	for len(sorted) > 0 {
		k := min(len(sorted), chunkMax/2)
		l.chunks = append(l.chunks, sorted[:k:k])
		sorted = sorted[k:]
	}
	return l
}

// insert adds one edge at its place in the order.
func (l *eventList) insert(e event) {
	l.n++
	if len(l.chunks) == 0 {
		l.chunks = [][]event{{e}}
		return
	}
	// The first chunk whose last edge is after e, or the last chunk.
	c, _ := slices.BinarySearchFunc(l.chunks, e, func(ch []event, e event) int {
		return eventCmp(ch[len(ch)-1], e)
	})
	c = min(c, len(l.chunks)-1)
	ch := l.chunks[c]
	i, _ := slices.BinarySearchFunc(ch, e, eventCmp)
	ch = slices.Insert(ch, i, e)
	if len(ch) <= chunkMax {
		l.chunks[c] = ch
		return
	}
	half := len(ch) / 2
	lo, hi := slices.Clone(ch[:half]), slices.Clone(ch[half:])
	l.chunks[c] = lo
	l.chunks = slices.Insert(l.chunks, c+1, hi)
}

type cursor struct{ c, i int }

func (l *eventList) peek(cur *cursor) (event, bool) {
	if cur.c >= len(l.chunks) {
		return event{}, false
	}
	return l.chunks[cur.c][cur.i], true
}

func (l *eventList) step(cur *cursor) {
	cur.i++
	if cur.i == len(l.chunks[cur.c]) {
		cur.c++
		cur.i = 0
	}
}

// all calls f on every edge in order.
func (l *eventList) all(f func(event)) {
	for _, ch := range l.chunks {
		for _, e := range ch {
			f(e)
		}
	}
}

// sortByTime sorts edges by time, stably (an LSD radix sort on the time
// offset): edges appended in node order come out in (time, node) order.
func sortByTime(ev []event) {
	if len(ev) < 2 {
		return
	}
	lo, hi := ev[0].at, ev[0].at
	for _, e := range ev {
		lo, hi = min(lo, e.at), max(hi, e.at)
	}
	span := uint64(hi - lo)
	const bits = 11
	buf := make([]event, len(ev))
	src, dst := ev, buf
	for shift := uint(0); shift < 64 && span>>shift > 0; shift += bits {
		var count [1<<bits + 1]int
		for _, e := range src {
			count[(uint64(e.at-lo)>>shift)&(1<<bits-1)+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, e := range src {
			d := (uint64(e.at-lo) >> shift) & (1<<bits - 1)
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ev[0] {
		copy(ev, src)
	}
}
