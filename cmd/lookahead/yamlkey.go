package main

import (
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlKeyOf finds the key of a YAML document whose value does not decode
// into its field of t (a struct type with yaml tags): the deepest key
// whose value alone fails to decode, as "plot.from" or "sites[1].speed".
// A decoder's own error may not say where (a type's UnmarshalText error
// names neither the key nor the line); "" when none is found.
func yamlKeyOf(doc *yaml.Node, t reflect.Type) string {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return failingKey(n, t, "")
}

func failingKey(n *yaml.Node, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if f, ok := yamlField(t, n.Content[i].Value); ok {
				if k := failingValue(n.Content[i+1], f.Type, join(path, n.Content[i].Value)); k != "" {
					return k
				}
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := failingValue(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); k != "" {
				return k
			}
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, item := range n.Content {
			if k := failingValue(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); k != "" {
				return k
			}
		}
	}
	return ""
}

// failingValue is path when n does not decode into t: the deepest key
// below it that fails, or path itself.
func failingValue(n *yaml.Node, t reflect.Type, path string) string {
	if n.Decode(reflect.New(t).Interface()) == nil {
		return ""
	}
	if k := failingKey(n, t, path); k != "" {
		return k
	}
	return path
}

// yamlField is the field of struct t that YAML key name decodes into.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			if inner, ok := yamlField(f.Type, name); ok {
				return inner, true // an inlined struct's keys are the outer one's
			}
			continue
		}
		if tag == name || tag == "" && strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
