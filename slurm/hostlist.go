package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHostlist bounds an expansion (a typo like n[1-999999999] must not
// allocate without limit).
const maxHostlist = 1 << 16

// ExpandHostlist lists the names of a Slurm hostlist expression:
// "ghost[1-2],vm" → ghost1 ghost2 vm; "n[01-03,7]" → n01 n02 n03 n7 (the
// width of a range's first bound is kept). One bracket group per name;
// "" and "(null)" are no names.
func ExpandHostlist(expr string) ([]string, error) {
	var out []string
	for _, item := range splitTop(nullable(expr)) {
		names, err := expandOne(item)
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", expr, err)
		}
		out = append(out, names...)
		if len(out) > maxHostlist {
			return nil, fmt.Errorf("hostlist %q: more than %d names", expr, maxHostlist)
		}
	}
	return out, nil
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var items []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		items = append(items, s[start:])
	}
	return items
}

func expandOne(item string) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.ContainsAny(item, "]") || item == "" {
			return nil, fmt.Errorf("bad name %q", item)
		}
		return []string{item}, nil
	}
	closing := strings.IndexByte(item, ']')
	if closing < open || strings.ContainsAny(item[closing+1:], "[]") || strings.Contains(item[open+1:closing], "[") {
		return nil, fmt.Errorf("bad brackets in %q", item)
	}
	prefix, suffix := item[:open], item[closing+1:]
	var out []string
	for _, r := range strings.Split(item[open+1:closing], ",") {
		lo, hi, width, err := parseRange(r)
		if err != nil {
			return nil, err
		}
		if hi-lo >= maxHostlist {
			return nil, fmt.Errorf("range %q too long", r)
		}
		for n := lo; n <= hi; n++ {
			out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, n, suffix))
		}
	}
	return out, nil
}

func parseRange(r string) (lo, hi, width int, err error) {
	a, b, isRange := strings.Cut(r, "-")
	if lo, err = strconv.Atoi(a); err != nil || lo < 0 || a == "" || a[0] == '+' {
		return 0, 0, 0, fmt.Errorf("bad range %q", r)
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(b); err != nil || hi < lo || b[0] == '+' {
			return 0, 0, 0, fmt.Errorf("bad range %q", r)
		}
	}
	return lo, hi, len(a), nil
}
