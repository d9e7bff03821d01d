package forecast

// Charged is what a grid job pays for an allocation of the given cost
// over [start, end) when it ends at ended: the share of the reservation it
// held, (ended − start) / (end − start), clamped to [0, 1]. A job that ends
// early gives the rest back and does not pay for it; one that never starts
// pays nothing. Each part's owner earns the same share of the part's cost.
// docs/formats.md, "What a job pays".
func Charged(cost float64, start, end, ended int64) float64 {
	if end <= start {
		return 0
	}
	share := float64(ended-start) / float64(end-start)
	return cost * min(max(share, 0), 1)
}
