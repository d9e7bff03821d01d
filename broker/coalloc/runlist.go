package coalloc

import (
	"cmp"
	"slices"
)

// runList is runs in (start, node) order, kept in chunks as eventList
// is, so that a placement inserts and removes runs without moving the
// whole list. No chunk is empty.
type runList struct {
	chunks [][]stretch
	n      int
}

// runChunkMax bounds a chunk of a run list (runs are 40 bytes: an
// insertion moves at most 10 KB).
const runChunkMax = 256

func newRunList(sorted []stretch) runList {
	l := runList{n: len(sorted)}
	for len(sorted) > 0 {
		k := min(len(sorted), runChunkMax/2)
		l.chunks = append(l.chunks, sorted[:k:k])
		sorted = sorted[k:]
	}
	return l
}

func (l *runList) key(r *stretch) int64 { return r.a }

// cmpAt orders run r against the position (k, node).
func (l *runList) cmpAt(r *stretch, k int64, node int32) int {
	if c := cmp.Compare(l.key(r), k); c != 0 {
		return c
	}
	return cmp.Compare(r.node, node)
}

// search is the first position whose (key, node) is at or after (k, node).
func (l *runList) search(k int64, node int32) cursor {
	c, _ := slices.BinarySearchFunc(l.chunks, k, func(ch []stretch, k int64) int {
		if l.cmpAt(&ch[len(ch)-1], k, node) < 0 {
			return -1
		}
		return 1
	})
	if c == len(l.chunks) {
		return cursor{c: c}
	}
	ch := l.chunks[c]
	i, _ := slices.BinarySearchFunc(ch, k, func(r stretch, k int64) int {
		if l.cmpAt(&r, k, node) < 0 {
			return -1
		}
		return 1
	})
	return cursor{c: c, i: i}
}

// insert adds r at its place in the order.
func (l *runList) insert(r stretch) {
	l.n++
	if len(l.chunks) == 0 {
		l.chunks = [][]stretch{{r}}
		return
	}
	cur := l.search(l.key(&r), r.node)
	if cur.c == len(l.chunks) {
		cur = cursor{c: cur.c - 1, i: len(l.chunks[cur.c-1])}
	}
	ch := slices.Insert(l.chunks[cur.c], cur.i, r)
	if len(ch) <= runChunkMax {
		l.chunks[cur.c] = ch
		return
	}
	half := len(ch) / 2
	lo, hi := slices.Clone(ch[:half]), slices.Clone(ch[half:])
	l.chunks[cur.c] = lo
	l.chunks = slices.Insert(l.chunks, cur.c+1, hi)
}

// remove deletes one run equal to r; it reports false when there is none.
func (l *runList) remove(r stretch) bool {
	k := l.key(&r)
	for cur := l.search(k, r.node); cur.c < len(l.chunks); cur.c, cur.i = cur.c+1, 0 {
		ch := l.chunks[cur.c]
		for ; cur.i < len(ch); cur.i++ {
			x := &ch[cur.i]
			if l.cmpAt(x, k, r.node) != 0 {
				return false
			}
			if *x != r {
				continue
			}
			l.n--
			if len(ch) == 1 {
				l.chunks = slices.Delete(l.chunks, cur.c, cur.c+1)
			} else {
				l.chunks[cur.c] = slices.Delete(ch, cur.i, cur.i+1)
			}
			return true
		}
	}
	return false
}
