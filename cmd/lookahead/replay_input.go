package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"lookahead/forecast/swf"
	"lookahead/internal/cli"
	"lookahead/internal/config"
	"lookahead/replay"
)

// loadScenario reads a YAML scenario: one document, no unknown keys, every
// value of its key's type. An error names the file, the key's path
// (grid.redraw.min) and what the key wants.
func loadScenario(path string) (replay.Scenario, error) {
	var sc replay.Scenario
	b, err := config.ReadFile(path)
	if err != nil {
		return sc, cli.UsageError{Err: fmt.Errorf("scenario: %w", err)}
	}
	if err := decodeYAMLFile("scenario", path, b, &sc, "see examples/replay/ and docs/replay.md"); err != nil {
		return sc, err
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) == nil && len(doc.Content) > 0 {
		if key, line, def := explicitZero(doc.Content[0]); key != "" {
			return sc, cli.Usagef("scenario %s: line %d: %s: 0: must be positive (leave the key out for its default, %s)", path, line, key, def)
		}
	}
	return sc, nil
}

// zeroIsUnset are the keys whose 0 the scenario's defaults take for
// unset (replay.Scenario.WithDefaults), with their defaults: written as
// 0 they would silently become the default, so they are refused.
var zeroIsUnset = map[string]map[string]string{
	"sites[]":  {"ppn": "1", "speed": "1", "heterogeneity": "1", "price": "1"},
	"local":    {"time_scale": "1"},
	"forecast": {"period": "300 s", "horizon": "48h"},
	"broker":   {"cycle": "60 s", "multi_site_factor": "1"},
}

// explicitZero finds the first key of zeroIsUnset written as 0 in the
// scenario's root mapping: its path, line and default.
func explicitZero(root *yaml.Node) (string, int, string) {
	if root.Kind != yaml.MappingNode {
		return "", 0, ""
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, root.Content[i+1]
		if keys, ok := zeroIsUnset[k]; ok {
			if key, line, def := zeroIn(v, k, keys); key != "" {
				return key, line, def
			}
		}
		if keys, ok := zeroIsUnset[k+"[]"]; ok && v.Kind == yaml.SequenceNode {
			for j, item := range v.Content {
				if key, line, def := zeroIn(item, k+"["+strconv.Itoa(j)+"]", keys); key != "" {
					return key, line, def
				}
			}
		}
	}
	return "", 0, ""
}

func zeroIn(m *yaml.Node, path string, keys map[string]string) (string, int, string) {
	if m.Kind != yaml.MappingNode {
		return "", 0, ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		def, ok := keys[k.Value]
		if !ok || v.Kind != yaml.ScalarNode {
			continue
		}
		if x, err := strconv.ParseFloat(v.Value, 64); err == nil && x == 0 {
			return path + "." + k.Value, v.Line, def
		}
	}
	return "", 0, ""
}

// unknownYAMLKey finds the first key of n that type t has no field for:
// its path, its line and the keys t knows there.
func unknownYAMLKey(n *yaml.Node, t reflect.Type, path string) (string, int, []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			f, ok := yamlField(t, k.Value)
			if !ok {
				return join(path, k.Value), k.Line, yamlKeys(t)
			}
			if key, line, known := unknownYAMLKey(n.Content[i+1], f.Type, join(path, k.Value)); key != "" {
				return key, line, known
			}
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, item := range n.Content {
			if key, line, known := unknownYAMLKey(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); key != "" {
				return key, line, known
			}
		}
	}
	return "", 0, nil
}

// yamlKeys are the YAML keys of struct t.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		tag, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if opts == "inline" && t.Field(i).Type.Kind() == reflect.Struct {
			keys = append(keys, yamlKeys(t.Field(i).Type)...)
		} else if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return keys
}

var yamlUnmarshalRE = regexp.MustCompile("line (\\d+): cannot unmarshal !!(\\w+) (`[^`]*` )?into (\\S+)")

// yamlTypeWords rewrites yaml's "line 3: cannot unmarshal !!str `x` into
// float64" as "line 3: got the text "x", want a number"; other errors
// pass as they are.
func yamlTypeWords(err error) string {
	m := yamlUnmarshalRE.FindStringSubmatch(err.Error())
	if m == nil {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	got := map[string]string{"str": "the text", "int": "the integer", "float": "the number", "bool": "the boolean",
		"seq": "a list", "map": "a mapping (key: value)", "null": "nothing"}[m[2]]
	if got == "" {
		got = "a " + m[2]
	}
	if v := strings.Trim(m[3], "` "); v != "" {
		got += " " + strconv.Quote(v)
	}
	return fmt.Sprintf("line %s: got %s, want %s", m[1], got, goTypeWords(m[4]))
}

func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list (each " + goTypeWords(t[2:]) + ")"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a text"
	case t == "replay.Duration":
		return "a duration (seconds, 10m, 48h or 2d)"
	case strings.HasPrefix(t, "*"):
		return goTypeWords(t[1:])
	}
	return "a mapping (key: value)"
}

// loadTraces reads every trace the scenario at path names; an error
// names the scenario and the key that names the trace. Records a trace
// leaves out are said on stderr (how many, why, the first few).
func loadTraces(stderr io.Writer, path string, sc replay.Scenario, dir string) (replay.Inputs, error) {
	in := replay.Inputs{Traces: map[string][]replay.TraceJob{}, Origins: map[string]int64{}}
	type named struct{ key, trace string }
	traces := []named{{"local.trace", sc.Local.Trace}, {"grid.trace", sc.Grid.Trace}}
	for i, s := range sc.Sites {
		traces = append(traces, named{"sites[" + strconv.Itoa(i) + "].trace", s.Trace})
	}
	for _, t := range traces {
		if t.trace == "" || in.Traces[t.trace] != nil {
			continue
		}
		full := resolveTrace(t.trace, filepath.Dir(path), dir)
		jobs, st, err := readReplayTrace(full)
		if err == nil && len(jobs) == 0 {
			err = noUsableJob(full, st)
		}
		if errors.Is(err, fs.ErrNotExist) && full != inScenarioDir(t.trace, path) {
			err = fmt.Errorf("not at %s either: %w", inScenarioDir(t.trace, path), err)
		}
		if err != nil {
			return replay.Inputs{}, cli.UsageError{Err: fmt.Errorf("scenario %s: %s %q: %w", path, t.key, t.trace, err)}
		}
		warnSkippedRecords(stderr, path, t.key, full, st)
		in.Traces[t.trace], in.Origins[t.trace] = jobs, st.Origin
	}
	return in, nil
}

// inScenarioDir is trace p's path relative to the scenario file's
// directory (p when absolute).
func inScenarioDir(p, scenario string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(scenario), p)
}

// resolveTrace is trace p relative to the scenario's directory base, or,
// when not there, its file name in dir (--trace-dir).
func resolveTrace(p, base, dir string) string {
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(base, p)
	}
	if _, err := os.Stat(full); err != nil && dir != "" {
		return filepath.Join(dir, filepath.Base(p))
	}
	return full
}

// readReplayTrace reads an SWF trace, gunzipping it when it is gzip data
// (whatever its name).
func readReplayTrace(path string) ([]replay.TraceJob, replay.SWFStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, replay.SWFStats{}, fmt.Errorf("%w (a path relative to the scenario file, or a file name found in --trace-dir)", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, replay.SWFStats{}, fmt.Errorf("%s is a directory: want an SWF trace file (.swf or .swf.gz)", path)
	}
	r, gz, err := swf.Unzipped(f)
	switch {
	case err != nil:
		return nil, replay.SWFStats{}, fmt.Errorf("%s: %w", path, err)
	case !gz && strings.HasSuffix(path, ".gz"):
		return nil, replay.SWFStats{}, fmt.Errorf("%s: named .gz but not gzip data", path)
	}
	jobs, st, err := replay.ReadSWF(r)
	if err != nil {
		return nil, replay.SWFStats{}, fmt.Errorf("%s: %w", path, err)
	}
	return jobs, st, nil
}

// noUsableJob is the error of a trace without a job record to replay.
func noUsableJob(path string, st replay.SWFStats) error {
	if err := swf.NoUsableJob(st.Jobs, st.Skips); err != nil {
		return err
	}
	size := "?"
	if fi, err := os.Stat(path); err == nil {
		size = strconv.FormatInt(fi.Size(), 10)
	}
	return fmt.Errorf("no job record (%s bytes): an empty or cut file, or not an SWF trace", size)
}

// warnSkippedRecords says how many records of a trace were left out and
// why, with the first few.
func warnSkippedRecords(w io.Writer, path, key, full string, st replay.SWFStats) {
	if st.Skipped == 0 {
		return
	}
	fmt.Fprintf(w, "warning: scenario %s: %s %s: %s\n", path, key, full, swf.LeftOut(st.Skipped+st.Jobs, st.Skips))
}
