package sim

import "strings"

// traceFeatures reads a Maui trace's feature list, "[a][b]" ("[NONE]":
// none), as MTraceLoadWorkload and MTraceLoadResource do (tokens between
// brackets).
func traceFeatures(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '[' || r == ']' }) {
		if f != "NONE" {
			out = append(out, f)
		}
	}
	return out
}

// traceFeatureList writes "a:b" as a trace's "[a][b]".
func traceFeatureList(fs string) string {
	return "[" + strings.Join(strings.Split(fs, ":"), "][") + "]"
}
