package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"lookahead/internal/durfmt"
)

// Effective is cfg (a config struct or a pointer to one) as a map keyed
// like its file, durations written as every binary writes them
// (internal/durfmt: "1m", "168h"): what `config` commands print. Fields whose json tag is "-" (passwords,
// tokens) are left out; unset optional values are null. Printed as JSON
// it is also a valid config file (JSON is YAML).
func Effective(cfg any) map[string]any {
	v := reflect.ValueOf(cfg)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	m, _ := effective(v, SchemaOf(cfg).root).(map[string]any)
	return m
}

func effective(v reflect.Value, n *node) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch {
	case n.json && n.kind == kindStruct:
		var out any
		raw, _ := json.Marshal(v.Interface())
		json.Unmarshal(raw, &out)
		return out
	case n.kind == kindStruct:
		out := map[string]any{}
		for _, name := range n.order {
			f := v.FieldByIndex(n.index[name])
			if tagOf(v.Type(), n.index[name], "json") == "-" {
				continue
			}
			out[name] = effective(f, n.fields[name])
		}
		return out
	case n.kind == kindMap:
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[k.String()] = effective(v.MapIndex(k), n.elem)
		}
		return out
	case n.kind == kindSlice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = effective(v.Index(i), n.elem)
		}
		return out
	case n.kind == kindDuration:
		return durfmt.Duration(time.Duration(v.Int()))
	}
	return v.Interface()
}

func tagOf(t reflect.Type, index []int, tag string) string {
	return t.FieldByIndex(index).Tag.Get(tag)
}

// Row is one key of the effective configuration as `config -o table`
// prints it: the key, its value (a list or an empty map as JSON) and
// where it was set (file:line, LOOKAHEAD_X, --flag or default).
type Row struct {
	Key   string
	Value string
	From  string
}

// EffectiveRows is Effective flattened to one row per key, sorted by key.
func EffectiveRows(cfg any, l *Loaded) []Row {
	var rows []Row
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(joinKey(prefix, k), m[k])
			}
			return
		}
		text := fmt.Sprint(v)
		if _, scalar := v.(string); !scalar {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		rows = append(rows, Row{Key: prefix, Value: text, From: l.Origin(prefix)})
	}
	walk("", Effective(cfg))
	return rows
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
