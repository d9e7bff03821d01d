package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"lookahead/forecast"
)

// The third compact form ("LAC3", written since issue 39; LAC2 is still
// read) codes a slot's end, and its price, by reference as well: on a
// busy site most slots repeat the interval of a slot on another node (a
// queued local job over several nodes, the free time between two jobs),
// and a slot's price follows from its interval. After the node and the
// start (as in LAC2), the slot's end is
//
//	j in 1..endRefs: the j-th most recent distinct end seen with this
//	                 start (most recently used first); its price code is
//	                 0 when the slot has that interval's price
//	j = 0:           a literal length follows (zigzag(end − start))
//
// and the price code is otherwise 1 + the index into the price table.
// The columns are: node, procs, start ref, end ref, price code, then the
// start literals (one per start ref 0) and the length literals (one per
// end ref 0). A 5,000-node site's forecast of 7 days and 20,000 queued
// jobs is 0.42 of its LAC2 size (docs/formats.md).
const compactMagic3 = "LAC3"

// endRefs is how many ends of one start a slot's end may refer to.
const endRefs = 15

// interval is an end seen with one start and the price index its
// interval was last seen at.
type interval struct {
	end   int64
	price int
}

// endsOf keeps, per start, its most recent distinct ends (most recently
// used last), for the end references of the encoder and the decoder.
type endsOf map[int64]*endList

type endList struct{ iv []interval }

func newEndsOf() endsOf { return endsOf{} }

// list is start's list, made when missing.
func (m endsOf) list(start int64) *endList {
	l := m[start]
	if l == nil {
		l = &endList{iv: make([]interval, 0, 2)}
		m[start] = l
	}
	return l
}

// find returns the position from the back (1 = most recent) of end in
// the list, 0 when not in it; a found end becomes the most recent.
func (l *endList) find(end int64) (int, interval) {
	n := len(l.iv)
	for j := 1; j <= n; j++ {
		if iv := l.iv[n-j]; iv.end == end {
			l.use(n - j)
			return j, iv
		}
	}
	return 0, interval{}
}

// at is the list's j-th most recent end, made the most recent; false
// when there is none.
func (l *endList) at(j int) (interval, bool) {
	n := len(l.iv)
	if j < 1 || j > n {
		return interval{}, false
	}
	iv := l.iv[n-j]
	l.use(n - j)
	return iv, true
}

// use moves the end at index i to the back.
func (l *endList) use(i int) {
	iv := l.iv[i]
	copy(l.iv[i:], l.iv[i+1:])
	l.iv[len(l.iv)-1] = iv
}

// add records end (with its price) as the list's most recent, forgetting
// the oldest beyond endRefs; it updates the price of an end already there.
func (l *endList) add(iv interval) {
	n := len(l.iv)
	if n > 0 && l.iv[n-1].end == iv.end {
		l.iv[n-1] = iv
		return
	}
	if n == endRefs {
		l.iv = append(l.iv[:0], l.iv[1:]...)
	}
	l.iv = append(l.iv, iv)
}

// slotColumns3 lays the slots out as the LAC3 columns and returns them
// with the price table.
func slotColumns3(f *forecast.Forecast) ([7]*bytes.Buffer, []float64, error) {
	var cols [7]*bytes.Buffer
	for i := range cols {
		cols[i] = new(bytes.Buffer)
	}
	index := make(map[string]int, len(f.Nodes))
	for i, n := range f.Nodes {
		index[n.Name] = i
	}
	priceIdx := map[uint64]int{}
	var prices []float64
	prevNode := -1
	var nodeEnds []int64 // ends of the current node's slots so far
	seen := newEndsOf()
	for i, s := range f.Slots {
		n, ok := index[s.Node]
		if !ok {
			return cols, nil, fmt.Errorf("slots[%d]: unknown node %q", i, s.Node)
		}
		if n != prevNode {
			nodeEnds = nodeEnds[:0]
		}
		bits := math.Float64bits(s.Price)
		p, ok := priceIdx[bits]
		if !ok {
			p = len(prices)
			priceIdx[bits] = p
			prices = append(prices, s.Price)
		}
		putVarint(cols[0], int64(n-max(prevNode, 0)))
		putUvarint(cols[1], uint64(max(s.Procs, 0)))
		k := backRef(nodeEnds, s.Start)
		putUvarint(cols[2], uint64(k))
		if k == 0 {
			putVarint(cols[5], s.Start-startRef(nodeEnds, f.Generated))
		}
		ends := seen.list(s.Start)
		j, iv := ends.find(s.End)
		putUvarint(cols[3], uint64(j))
		switch {
		case j == 0:
			putVarint(cols[6], s.End-s.Start)
			putUvarint(cols[4], uint64(p+1))
		case iv.price == p:
			putUvarint(cols[4], 0)
		default:
			putUvarint(cols[4], uint64(p+1))
		}
		ends.add(interval{end: s.End, price: p})
		prevNode, nodeEnds = n, append(nodeEnds, s.End)
	}
	return cols, prices, nil
}

// readColumns3 reads the LAC3 columns of n slots.
func readColumns3(br io.ByteReader, n int) ([7][]int64, error) {
	var cols [7][]int64
	for c := range cols {
		count := n
		switch c {
		case 5:
			count = zeros(cols[2]) // one literal per start coded 0
		case 6:
			count = zeros(cols[3]) // one literal per end coded 0
		}
		cols[c] = make([]int64, 0, min(count, 1<<20))
		for i := 0; i < count; i++ {
			v, err := readValue(br, c == 0 || c >= 5)
			if err != nil {
				return cols, fmt.Errorf("column %d, slot %d: %w", c, i, err)
			}
			cols[c] = append(cols[c], v)
		}
	}
	return cols, nil
}

// readValue reads one varint: zigzag-signed, or unsigned and at most
// math.MaxInt32 (counts, references, codes).
func readValue(br io.ByteReader, signed bool) (int64, error) {
	if signed {
		return binary.ReadVarint(br)
	}
	u, err := binary.ReadUvarint(br)
	if err == nil && u > math.MaxInt32 {
		err = fmt.Errorf("value %d out of range", u)
	}
	return int64(u), err
}

func zeros(col []int64) int {
	n := 0
	for _, v := range col {
		if v == 0 {
			n++
		}
	}
	return n
}

// assembleSlots3 builds the slots from the LAC3 columns.
func assembleSlots3(f *forecast.Forecast, cols [7][]int64, prices []float64) error {
	prevNode, startLit, lenLit := -1, 0, 0
	var ends []int64
	seen := newEndsOf()
	for i := range cols[0] {
		n := int64(max(prevNode, 0)) + cols[0][i]
		if n < 0 || n >= int64(len(f.Nodes)) {
			return fmt.Errorf("slot %d: node index %d out of range", i, n)
		}
		if int(n) != prevNode {
			ends = ends[:0]
		}
		var start int64
		switch k := int(cols[2][i]); {
		case k == 0:
			start = startRef(ends, f.Generated) + cols[5][startLit]
			startLit++
		case k <= min(backRefs, len(ends)):
			start = ends[len(ends)-k]
		default:
			return fmt.Errorf("slot %d: start refers to end %d of %d", i, k, len(ends))
		}
		l := seen.list(start)
		end, p, err := endAndPrice(l, start, cols[3][i], cols[4][i], cols[6], &lenLit)
		if err != nil {
			return fmt.Errorf("slot %d: %w", i, err)
		}
		if p < 0 || p >= len(prices) {
			return fmt.Errorf("slot %d: price index %d out of range", i, p)
		}
		l.add(interval{end: end, price: p})
		f.Slots = append(f.Slots, forecast.Slot{Node: f.Nodes[n].Name, Procs: int(cols[1][i]),
			Start: start, End: end, Price: prices[p]})
		prevNode, ends = int(n), append(ends, end)
	}
	return nil
}

// endAndPrice decodes one slot's end reference and price code.
func endAndPrice(l *endList, start, j, code int64, lengths []int64, lit *int) (int64, int, error) {
	if j == 0 {
		if code == 0 {
			return 0, 0, fmt.Errorf("price code 0 without an end reference")
		}
		end := start + lengths[*lit]
		*lit++
		return end, int(code - 1), nil
	}
	iv, ok := l.at(int(j))
	if !ok {
		return 0, 0, fmt.Errorf("end refers to end %d of %d seen with start %d", j, len(l.iv), start)
	}
	if code == 0 {
		return iv.end, iv.price, nil
	}
	return iv.end, int(code - 1), nil
}
