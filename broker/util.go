package broker

import "math"

func badFloat(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
