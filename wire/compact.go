package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"lookahead/forecast"
)

// The second compact forecast form (inside the gzip stream; written until
// issue 39 and still read — the third, LAC3, is in compact3.go):
//
//	"LAC1"
//	uvarint n, then n bytes: JSON {"version","site","seq","generated","horizon","nodes"}
//	uvarint p, then p prices as little-endian float64 bits (the price table)
//	uvarint s (number of slots), then five columns of s varints each:
//	  node   zigzag(node index − previous slot's node index)
//	  procs  uvarint
//	  start  uvarint k: 1..backRefs means start = the end of the k-th
//	         previous slot of the same node (a node's slots are stacked
//	         layers that abut); 0 means a literal follows in the last column
//	  length zigzag(end − start)
//	  price  uvarint index into the price table
//	then one column of zigzag literals, one per start coded 0:
//	start − ref, ref = previous slot's end on the same node, else generated.
//
// Columns keep like values together, so gzip finds long runs. Slot order
// is preserved.
const compactMagic = "LAC2"

// backRefs is how many previous ends of a node a start may refer to.
const backRefs = 15

type compactHeader struct {
	Version   int             `json:"version"`
	Site      string          `json:"site"`
	Seq       uint64          `json:"seq"`
	Generated int64           `json:"generated"`
	Horizon   int64           `json:"horizon"`
	Nodes     []forecast.Node `json:"nodes"`
	// optional: what the forecaster could not model (forecast.Forecast)
	Unmodelled []string `json:"unmodelled,omitempty"`
	FreePrice  float64  `json:"free_price,omitempty"`
	RunsParts  *bool    `json:"runs_parts,omitempty"`
}

// writeCompact writes the LAC3 form (compact3.go).
func writeCompact(w io.Writer, f *forecast.Forecast) error {
	bw := bufio.NewWriter(w)
	hdr, err := json.Marshal(compactHeader{f.Version, f.Site, f.Seq, f.Generated, f.Horizon, f.Nodes, f.Unmodelled, f.FreePrice, f.RunsParts})
	if err != nil {
		return err
	}
	cols, prices, err := slotColumns3(f)
	if err != nil {
		return err
	}
	writeBody(bw, compactMagic3, hdr, prices, len(f.Slots), cols[:])
	return bw.Flush()
}

// writeBody writes a compact form after its magic: the header, the price
// table, the slot count and the columns.
func writeBody(bw *bufio.Writer, magic string, hdr []byte, prices []float64, slots int, cols []*bytes.Buffer) {
	bw.WriteString(magic)
	putUvarint(bw, uint64(len(hdr)))
	bw.Write(hdr)
	putUvarint(bw, uint64(len(prices)))
	for _, p := range prices {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(p))
		bw.Write(b[:])
	}
	putUvarint(bw, uint64(slots))
	for _, c := range cols {
		bw.Write(c.Bytes())
	}
}

// backRef finds start among the last backRefs ends (1 = the latest), or 0.
func backRef(ends []int64, start int64) int {
	for k := 1; k <= backRefs && k <= len(ends); k++ {
		if ends[len(ends)-k] == start {
			return k
		}
	}
	return 0
}

func startRef(ends []int64, generated int64) int64 {
	if len(ends) == 0 {
		return generated
	}
	return ends[len(ends)-1]
}

func putUvarint(w io.ByteWriter, v uint64) {
	for v >= 0x80 {
		w.WriteByte(byte(v) | 0x80)
		v >>= 7
	}
	w.WriteByte(byte(v))
}

func putVarint(w io.ByteWriter, v int64) {
	putUvarint(w, uint64(v<<1)^uint64(v>>63))
}

var errCompact = errors.New("compact forecast")

func readCompact(br *bufio.Reader) (*forecast.Forecast, error) {
	f, err := readCompactBody(br)
	if err != nil {
		return nil, fmt.Errorf("decode forecast: %w: %w: %w", forecast.ErrInvalid, errCompact, err)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

func readCompactBody(br *bufio.Reader) (*forecast.Forecast, error) {
	magic := make([]byte, len(compactMagic))
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, err
	}
	f, err := readCompactHeader(br)
	if err != nil {
		return nil, err
	}
	prices, err := readPrices(br)
	if err != nil {
		return nil, err
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("slot count: %w", err)
	}
	if n > MaxForecastSlots {
		return nil, fmt.Errorf("%w: %d slots, at most %d", ErrTooLarge, n, MaxForecastSlots)
	}
	f.Slots = make([]forecast.Slot, 0, min(n, 1<<20))
	if string(magic) == compactMagic3 {
		cols, err := readColumns3(br, int(n))
		if err == nil {
			err = assembleSlots3(f, cols, prices)
		}
		if err != nil {
			return nil, err
		}
	} else {
		cols, err := readColumns(br, int(n))
		if err == nil {
			err = assembleSlots(f, cols, prices)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the slots")
	}
	return f, nil
}

func readCompactHeader(br *bufio.Reader) (*forecast.Forecast, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("header length: %w", err)
	}
	if n > maxHeaderBytes {
		return nil, fmt.Errorf("%w: header of %d bytes, at most %d", ErrTooLarge, n, maxHeaderBytes)
	}
	raw := make([]byte, 0, min(n, 1<<20))
	buf := bytes.NewBuffer(raw)
	if _, err := io.CopyN(buf, br, int64(n)); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	dec := json.NewDecoder(buf)
	dec.DisallowUnknownFields()
	var h compactHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("header: trailing data")
	}
	if len(h.Nodes) > MaxForecastNodes {
		return nil, fmt.Errorf("%w: %d nodes, at most %d", ErrTooLarge, len(h.Nodes), MaxForecastNodes)
	}
	return &forecast.Forecast{Version: h.Version, Site: h.Site, Seq: h.Seq,
		Generated: h.Generated, Horizon: h.Horizon, Nodes: h.Nodes, Unmodelled: h.Unmodelled, FreePrice: h.FreePrice,
		RunsParts: h.RunsParts}, nil
}

func readPrices(br *bufio.Reader) ([]float64, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("price count: %w", err)
	}
	if n > MaxForecastSlots {
		return nil, fmt.Errorf("%w: %d prices, at most %d", ErrTooLarge, n, MaxForecastSlots)
	}
	prices := make([]float64, 0, min(n, 1<<16))
	for range n {
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		prices = append(prices, math.Float64frombits(binary.LittleEndian.Uint64(b[:])))
	}
	return prices, nil
}

func readColumns(br *bufio.Reader, n int) ([6][]int64, error) {
	var cols [6][]int64
	for c := range cols {
		count := n
		if c == 5 {
			count = 0 // one literal per start coded 0
			for _, k := range cols[2] {
				if k == 0 {
					count++
				}
			}
		}
		cols[c] = make([]int64, 0, min(count, 1<<20))
		for i := 0; i < count; i++ {
			v, err := readValue(br, c == 0 || c == 3 || c == 5)
			if err != nil {
				return cols, fmt.Errorf("column %d, slot %d: %w", c, i, err)
			}
			cols[c] = append(cols[c], v)
		}
	}
	return cols, nil
}

func assembleSlots(f *forecast.Forecast, cols [6][]int64, prices []float64) error {
	prevNode, lit := -1, 0
	var ends []int64
	for i := range cols[0] {
		n := int64(max(prevNode, 0)) + cols[0][i]
		if n < 0 || n >= int64(len(f.Nodes)) {
			return fmt.Errorf("slot %d: node index %d out of range", i, n)
		}
		p := cols[4][i]
		if p < 0 || p >= int64(len(prices)) {
			return fmt.Errorf("slot %d: price index %d out of range", i, p)
		}
		if int(n) != prevNode {
			ends = ends[:0]
		}
		var start int64
		switch k := int(cols[2][i]); {
		case k == 0:
			start = startRef(ends, f.Generated) + cols[5][lit]
			lit++
		case k <= min(backRefs, len(ends)):
			start = ends[len(ends)-k]
		default:
			return fmt.Errorf("slot %d: start refers to end %d of %d", i, k, len(ends))
		}
		end := start + cols[3][i]
		f.Slots = append(f.Slots, forecast.Slot{Node: f.Nodes[n].Name, Procs: int(cols[1][i]),
			Start: start, End: end, Price: prices[p]})
		prevNode, ends = int(n), append(ends, end)
	}
	return nil
}
