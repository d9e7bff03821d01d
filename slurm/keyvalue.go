package slurm

import "strings"

// pair is one Key=Value of scontrol's text output.
type pair struct{ Key, Value string }

// splitPairs cuts one line of scontrol text into its Key=Value pairs. A key
// starts the line or follows a blank and is letters, digits, '_', '/' or
// ':' then '='; a value runs to the next key, so it may hold blanks
// ("Reason=down by hand [root@…]") and '=' ("TRES=cpu=4"). Text before the
// first key is ignored.
func splitPairs(line string) []pair {
	var starts []int
	for i := 0; i < len(line); i++ {
		if (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') && keyAt(line[i:]) > 0 {
			starts = append(starts, i)
		}
	}
	pairs := make([]pair, 0, len(starts))
	for n, s := range starts {
		end := len(line)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		k := keyAt(line[s:])
		pairs = append(pairs, pair{Key: line[s : s+k], Value: strings.TrimSpace(line[s+k+1 : end])})
	}
	return pairs
}

// keyAt is the length of the key s starts with (before its '='), or 0.
func keyAt(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '=':
			return i
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_', c == '/', c == ':':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return 0
		}
	}
	return 0
}

// nullable maps scontrol's "(null)" to "".
func nullable(v string) string {
	if v == "(null)" {
		return ""
	}
	return v
}

// list splits a comma list; "" and "(null)" are no items.
func list(v string) []string {
	v = nullable(v)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
