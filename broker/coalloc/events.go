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
