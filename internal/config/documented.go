package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// commentedKey is a commented-out key line of a documented config file:
// "  # creds: /etc/x" or "  #   - {queue: low}", never prose ("# Durations
// are ...": prose does not start with a lower-case key and a colon).
var commentedKey = regexp.MustCompile(`^(\s*)# ?(\s*(?:- )?[a-z][a-z0-9_]*:(?:\s.*)?|\s*- [\[{].*)$`)

// CheckDocumented checks a packaged config file (such as
// /etc/lookahead/agent.yaml) against the schema: the file is valid as it
// is, and again with its commented-out example lines uncommented, and
// together they mention every key. It returns every problem at once.
func CheckDocumented(s *Schema, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var ps problems
	_, fps := checkFile(s, path, data)
	ps = append(ps, fps...)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = commentedKey.ReplaceAllString(l, "$1$2")
	}
	info, ups := checkFile(s, path+" (examples uncommented)", []byte(strings.Join(lines, "\n")))
	ps = append(ps, ups...)
	if len(ups) == 0 {
		for _, key := range s.Keys() {
			if _, ok := info.lines[key]; !ok {
				ps.add(path, key, "not documented (add it, or a commented-out example of it)")
			}
		}
	}
	if err := ps.err(); err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}
