package wire

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"

	"lookahead/forecast"
)

// encodeLAC2 is what agents before issue 39 published (the LAC2 compact
// form): the broker must still read it.
func encodeLAC2(f *forecast.Forecast) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	bw := bufio.NewWriter(zw)
	hdr, err := json.Marshal(compactHeader{f.Version, f.Site, f.Seq, f.Generated, f.Horizon, f.Nodes, f.Unmodelled, 0, nil}) // no free_price, no runs_parts then
	if err != nil {
		return nil, err
	}
	cols, prices, err := slotColumns(f)
	if err != nil {
		return nil, err
	}
	writeBody(bw, compactMagic, hdr, prices, len(f.Slots), cols[:])
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// slotColumns lays the slots out as the five varint columns and returns
// them with the price table.
func slotColumns(f *forecast.Forecast) ([6]*bytes.Buffer, []float64, error) {
	var cols [6]*bytes.Buffer
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
	var ends []int64 // ends of the current node's slots so far
	for i, s := range f.Slots {
		n, ok := index[s.Node]
		if !ok {
			return cols, nil, fmt.Errorf("slots[%d]: unknown node %q", i, s.Node)
		}
		if n != prevNode {
			ends = ends[:0]
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
		k := backRef(ends, s.Start)
		putUvarint(cols[2], uint64(k))
		if k == 0 {
			putVarint(cols[5], s.Start-startRef(ends, f.Generated))
		}
		putVarint(cols[3], s.End-s.Start)
		putUvarint(cols[4], uint64(p))
		prevNode, ends = n, append(ends, s.End)
	}
	return cols, prices, nil
}
