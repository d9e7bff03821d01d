package forecast

// WindowCount is what ClipToWindow did to a forecast's slots.
type WindowCount struct {
	Clipped int `json:"clipped"` // slots cut to the window
	Dropped int `json:"dropped"` // slots wholly outside it
}

// Changed reports whether any slot was clipped or dropped.
func (c WindowCount) Changed() bool { return c.Clipped+c.Dropped > 0 }

// ClipToWindow applies the rule of docs/formats.md, "Slots and the
// forecast's window": a forecast speaks only of [Generated, Horizon], so a
// slot partly outside it is cut to it and a slot wholly outside it (no
// second of it inside) is dropped; both are counted. The forecast given is
// not modified: when a slot changes, the result has its own slots.
func ClipToWindow(f Forecast) (Forecast, WindowCount) {
	var c WindowCount
	for _, s := range f.Slots {
		switch {
		case s.End <= f.Generated || s.Start >= f.Horizon:
			c.Dropped++
		case s.Start < f.Generated || s.End > f.Horizon:
			c.Clipped++
		}
	}
	if !c.Changed() {
		return f, c
	}
	slots := make([]Slot, 0, len(f.Slots)-c.Dropped)
	for _, s := range f.Slots {
		if s.End <= f.Generated || s.Start >= f.Horizon {
			continue
		}
		s.Start, s.End = max(s.Start, f.Generated), min(s.End, f.Horizon)
		slots = append(slots, s)
	}
	f.Slots = slots
	return f, c
}
