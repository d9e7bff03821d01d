package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileBytes bounds a config file (and the CLI's YAML inputs): anything
// larger is not one, and reading a device (/dev/zero) or a FIFO by
// mistake must not take the process's memory.
const MaxFileBytes = 16 << 20

// ReadFile reads a small input file, at most MaxFileBytes; a larger one
// is bad input (BadInput), naming the file.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, tooLarge{path}
	}
	return b, nil
}

type tooLarge struct{ path string }

func (e tooLarge) Error() string {
	return fmt.Sprintf("%s: more than %d MiB, too large for this input (a device or a log named by mistake?)", e.path, MaxFileBytes>>20)
}
func (tooLarge) BadInput() bool { return true }

// fileInfo is what checking a file learnt besides its problems.
type fileInfo struct {
	name  string
	lines map[string]int // key → line where it is set
	maps  []fileMap      // maps set in the file, outside lists
}

// fileMap is a map-valued key as the file wrote it (keys keep their case).
type fileMap struct {
	key  string
	node *yaml.Node
}

func (f fileInfo) where(key string) string {
	return fmt.Sprintf("%s:%d", f.name, f.lines[key])
}

// checkFile checks a YAML config against the schema: every key known,
// every value of its key's type, durations with units, no key twice.
func checkFile(s *Schema, name string, data []byte) (fileInfo, problems) {
	info := fileInfo{name: name, lines: map[string]int{}}
	doc, ps := oneDocument(name, data)
	if len(ps) > 0 || len(doc.Content) == 0 {
		return info, ps // an empty file sets nothing
	}
	w := &walker{info: &info}
	w.walk(s.root, doc.Content[0], "", false)
	return info, w.ps
}

// oneDocument parses the file's one YAML document. A second document
// (after a "---" line) is refused: the loader would read the first only and
// silently drop what follows.
func oneDocument(name string, data []byte) (yaml.Node, problems) {
	var doc, next yaml.Node
	var ps problems
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&doc)
	if err == nil {
		if err = dec.Decode(&next); err == nil {
			ps.add(fmt.Sprintf("%s:%d", name, next.Line), "", "a second YAML document starts here (\"---\"): a config file holds one; merge the two or remove the \"---\" line")
			return doc, ps
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		ps.add(name, "", "not valid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return doc, ps
}

type walker struct {
	info *fileInfo
	ps   problems
}

func (w *walker) at(y *yaml.Node) string { return fmt.Sprintf("%s:%d", w.info.name, y.Line) }

func (w *walker) walk(n *node, y *yaml.Node, key string, inList bool) {
	if y.Kind == yaml.AliasNode && y.Alias != nil {
		y = y.Alias
	}
	if y.Kind == yaml.ScalarNode && y.Tag == "!!null" {
		return // unset: the default applies
	}
	switch n.kind {
	case kindStruct:
		w.mapping(y, key, func(k, v *yaml.Node) {
			child := n.fields[k.Value]
			if child == nil {
				w.unknown(n, k, key)
				return
			}
			ck := join(key, k.Value)
			w.info.lines[ck] = k.Line
			w.walk(child, v, ck, inList)
		})
	case kindMap:
		if !inList && y.Kind == yaml.MappingNode {
			w.info.maps = append(w.info.maps, fileMap{key: key, node: y})
		}
		w.mapping(y, key, func(k, v *yaml.Node) {
			w.info.lines[key+"."+k.Value] = k.Line
			w.walk(n.elem, v, key+"."+k.Value, inList)
		})
	case kindSlice:
		if y.Kind != yaml.SequenceNode {
			w.ps.add(w.at(y), keyOrTop(key), "must be a list, e.g. [a, b] or lines starting with \"- \"")
			return
		}
		for i, item := range y.Content {
			w.walk(n.elem, item, fmt.Sprintf("%s[%d]", key, i), true)
		}
	case kindAny:
	default:
		if y.Kind != yaml.ScalarNode {
			w.ps.add(w.at(y), key, "must be %s, not a %s", n.kind, yamlKind(y))
			return
		}
		if err := checkScalar(n.kind, y.Value, y.Tag == "!!int" || y.Tag == "!!float"); err != nil {
			w.ps.add(w.at(y), key, "%v", err)
		}
	}
}

// mapping calls f for each key/value of a mapping node, refusing a key
// given twice and keys that are not plain strings.
func (w *walker) mapping(y *yaml.Node, key string, f func(k, v *yaml.Node)) {
	if y.Kind != yaml.MappingNode {
		w.ps.add(w.at(y), keyOrTop(key), "must be a map (key: value), not a %s", yamlKind(y))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "<<" {
			w.ps.add(w.at(k), keyOrTop(key), "only plain keys are supported (no merge keys or complex keys)")
			continue
		}
		if line, dup := seen[k.Value]; dup {
			w.ps.add(w.at(k), join(key, k.Value), "set twice (first at line %d)", line)
			continue
		}
		seen[k.Value] = k.Line
		f(k, v)
	}
}

func (w *walker) unknown(n *node, k *yaml.Node, parent string) {
	msg := "unknown key"
	if s := suggest(k.Value, n.order); s != "" {
		msg += "; did you mean " + join(parent, s) + "?"
	} else {
		msg += fmt.Sprintf("; the keys here are %s", strings.Join(n.order, ", "))
	}
	w.ps.add(w.at(k), join(parent, k.Value), "%s", msg)
}

func keyOrTop(key string) string {
	if key == "" {
		return "(top level)"
	}
	return key
}

func yamlKind(y *yaml.Node) string {
	switch y.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	}
	return "value " + y.Value
}

// plain is a YAML value as Go values, every map key the text as written
// (a user named "true" or "123" stays a string key, as in the file).
func plain(y *yaml.Node) (any, error) {
	if y.Kind == yaml.AliasNode && y.Alias != nil {
		y = y.Alias
	}
	switch y.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(y.Content)/2)
		for i := 0; i+1 < len(y.Content); i += 2 {
			v, err := plain(y.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[y.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(y.Content))
		for i, item := range y.Content {
			v, err := plain(item)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	}
	var v any
	err := y.Decode(&v)
	return v, err
}
