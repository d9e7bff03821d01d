package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"lookahead/internal/durfmt"
)

// checkBounds refuses negative durations and values outside their key's
// `min` and `max` tags, naming where the value came from.
func checkBounds(v reflect.Value, n *node, prefix string, l *Loaded, ps *problems) {
	for _, name := range n.order {
		c, key := n.fields[name], join(prefix, name)
		fv, ok := field(v, n.index[name])
		if !ok {
			continue
		}
		switch c.kind {
		case kindStruct:
			checkBounds(fv, c, key, l, ps)
		case kindDuration:
			d := time.Duration(fv.Int())
			lo, _ := time.ParseDuration(orZero(c.min))
			if d < max(lo, 0) {
				ps.add(l.Origin(key), key, "%s is below the least allowed, %s", durfmt.Duration(d), durfmt.Duration(max(lo, 0)))
			}
		case kindInt, kindFloat:
			lo, _ := strconv.ParseFloat(c.min, 64)
			hi, _ := strconv.ParseFloat(c.max, 64)
			switch x := number(fv); {
			case c.min != "" && x < lo:
				ps.add(l.Origin(key), key, "%v is below the least allowed, %v", x, c.min)
			case c.max != "" && x > hi:
				ps.add(l.Origin(key), key, "%v is above the most allowed, %v", x, c.max)
			}
		}
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func number(v reflect.Value) float64 {
	if v.CanInt() {
		return float64(v.Int())
	}
	return v.Float()
}

// field is v's field at index, through pointers; false when a nil
// pointer is on the way (the key is unset).
func field(v reflect.Value, index []int) (reflect.Value, bool) {
	for _, i := range index {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// fieldByKey finds the settable field of a dotted key through structs.
func fieldByKey(v reflect.Value, n *node, key string) (reflect.Value, bool) {
	for _, part := range strings.Split(key, ".") {
		if n.kind != kindStruct || n.fields[part] == nil {
			return v, false
		}
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.FieldByIndex(n.index[part])
		n = n.fields[part]
	}
	return v, v.CanSet()
}

// jsonHook decodes struct types that have json tags and no mapstructure
// tags (the forecast package's) with encoding/json, refusing unknown
// fields.
func jsonHook(_, to reflect.Type, data any) (any, error) {
	t := to
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(time.Time{}) || hasTag(t, "mapstructure") || !hasTag(t, "json") {
		return data, nil
	}
	if _, isMap := data.(map[string]any); !isMap {
		return data, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", t, err)
	}
	p := reflect.New(t)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p.Interface()); err != nil {
		return nil, fmt.Errorf("%v: %w", t, err)
	}
	if to.Kind() == reflect.Pointer {
		return p.Interface(), nil
	}
	return p.Elem().Interface(), nil
}
