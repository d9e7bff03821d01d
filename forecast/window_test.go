package forecast

import (
	"reflect"
	"testing"
)

func TestClipToWindow(t *testing.T) {
	const g, h = 1000, 2000
	sl := func(start, end int64) Slot { return Slot{Node: "n1", Procs: 4, Start: start, End: end, Price: 1} }
	for _, c := range []struct {
		name string
		in   []Slot
		want []Slot
		cnt  WindowCount
	}{
		{"inside", []Slot{sl(g, h), sl(1200, 1300)}, []Slot{sl(g, h), sl(1200, 1300)}, WindowCount{}},
		{"starts before generated", []Slot{sl(500, 1500)}, []Slot{sl(g, 1500)}, WindowCount{Clipped: 1}},
		{"ends past the horizon", []Slot{sl(1500, h+26*3600)}, []Slot{sl(1500, h)}, WindowCount{Clipped: 1}},
		{"covers the window", []Slot{sl(0, 5000)}, []Slot{sl(g, h)}, WindowCount{Clipped: 1}},
		{"wholly before", []Slot{sl(g-9*86400, g-8*86400), sl(1100, 1200)}, []Slot{sl(1100, 1200)}, WindowCount{Dropped: 1}},
		{"ends at generated", []Slot{sl(500, g)}, []Slot{}, WindowCount{Dropped: 1}},
		{"starts at the horizon", []Slot{sl(h, h+10)}, []Slot{}, WindowCount{Dropped: 1}},
		{"wholly after, and one clipped", []Slot{sl(h+10, h+20), sl(900, 1100)}, []Slot{sl(g, 1100)}, WindowCount{Clipped: 1, Dropped: 1}},
	} {
		f := Forecast{Version: 1, Site: "a", Generated: g, Horizon: h, Nodes: []Node{{Name: "n1", Procs: 4, Speed: 1}}, Slots: c.in}
		before := append([]Slot(nil), c.in...)
		got, cnt := ClipToWindow(f)
		if cnt != c.cnt || !reflect.DeepEqual(got.Slots, c.want) && !(len(got.Slots) == 0 && len(c.want) == 0) {
			t.Errorf("%s: %+v %+v, want %+v %+v", c.name, got.Slots, cnt, c.want, c.cnt)
		}
		if !reflect.DeepEqual(f.Slots, before) {
			t.Errorf("%s: the forecast given was modified", c.name)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: clipped forecast invalid: %v", c.name, err)
		}
	}
}
