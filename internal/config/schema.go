package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// kind is what a key holds.
type kind int

const (
	kindStruct kind = iota
	kindMap
	kindSlice
	kindDuration
	kindString
	kindBool
	kindInt
	kindUint
	kindFloat
	kindAny
)

var kindNames = map[kind]string{kindStruct: "a map of keys", kindMap: "a map", kindSlice: "a list",
	kindDuration: "a duration", kindString: "a string", kindBool: "true or false", kindInt: "an integer",
	kindUint: "a non-negative integer", kindFloat: "a number", kindAny: "any value"}

func (k kind) String() string { return kindNames[k] }

// node is one key of a schema: a struct's fields, a map's or a list's
// element, or a leaf.
type node struct {
	kind   kind
	typ    reflect.Type // the Go type (pointers removed)
	fields map[string]*node
	order  []string // field names in declaration order
	index  map[string][]int
	elem   *node
	def    string // `default` tag, "" for none
	hasDef bool
	min    string // `min` tag, "" for none
	max    string // `max` tag, "" for none
	json   bool   // decoded by encoding/json (the type has no mapstructure tags)
}

var durationType = reflect.TypeOf(time.Duration(0))

// Schema is the set of keys a config struct accepts.
type Schema struct{ root *node }

// SchemaOf derives the schema of the struct v (or a pointer to it). It
// panics on a type it cannot describe (a programming error, found by the
// first test that loads the config).
func SchemaOf(v any) *Schema {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return &Schema{root: build(t, false)}
}

func build(t reflect.Type, viaJSON bool) *node {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	n := &node{typ: t, json: viaJSON}
	switch {
	case t == durationType:
		n.kind = kindDuration
	case t.Kind() == reflect.Struct:
		n.kind = kindStruct
		n.json = viaJSON || !hasTag(t, "mapstructure")
		n.fields, n.index = map[string]*node{}, map[string][]int{}
		addFields(n, t, nil)
	case t.Kind() == reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("config: map key of %v must be a string", t))
		}
		n.kind, n.elem = kindMap, build(t.Elem(), viaJSON)
	case t.Kind() == reflect.Slice:
		n.kind, n.elem = kindSlice, build(t.Elem(), viaJSON)
	default:
		n.kind = scalarKind(t)
	}
	return n
}

func scalarKind(t reflect.Type) kind {
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Interface:
		return kindAny
	}
	panic(fmt.Sprintf("config: cannot describe %v", t))
}

// addFields adds t's exported fields to n; anonymous structs without a
// name of their own are inlined (as encoding/json and mapstructure's
// squash do).
func addFields(n *node, t reflect.Type, prefix []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, squash := fieldName(f, n.json)
		idx := append(append([]int{}, prefix...), i)
		if name == "-" {
			continue
		}
		if squash || (f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct) {
			addFields(n, f.Type, idx)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		child := build(f.Type, n.json)
		child.def, child.hasDef = f.Tag.Lookup("default")
		child.min, child.max = f.Tag.Get("min"), f.Tag.Get("max")
		n.fields[name], n.index[name] = child, idx
		n.order = append(n.order, name)
	}
}

// fieldName is the key of f: its mapstructure tag, or its json tag for
// types decoded by encoding/json.
func fieldName(f reflect.StructField, viaJSON bool) (name string, squash bool) {
	tag := "mapstructure"
	if viaJSON {
		tag = "json"
	}
	parts := strings.Split(f.Tag.Get(tag), ",")
	for _, p := range parts[1:] {
		squash = squash || p == "squash" || p == "inline"
	}
	return parts[0], squash
}

func hasTag(t reflect.Type, tag string) bool {
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup(tag); ok {
			return true
		}
	}
	return false
}

// leaf is one settable key of a schema: a scalar, or a list of scalars.
type leaf struct {
	key string
	n   *node
}

// leaves lists the keys that hold scalars (or lists of scalars) reachable
// through structs only, in declaration order: the keys that have defaults
// and environment variables.
func (s *Schema) leaves() []leaf {
	var out []leaf
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		for _, name := range n.order {
			c, key := n.fields[name], join(prefix, name)
			switch {
			case c.kind == kindStruct:
				walk(key, c)
			case c.kind == kindMap, c.kind == kindSlice && c.elem.kind == kindStruct:
			default:
				out = append(out, leaf{key, c})
			}
		}
	}
	walk("", s.root)
	return out
}

// Keys lists every key of the schema that is not inside a map or a list
// ("nats.url", "budgets.users"), sorted: what a documented config file
// must mention.
func (s *Schema) Keys() []string {
	var out []string
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		for _, name := range n.order {
			c, key := n.fields[name], join(prefix, name)
			out = append(out, key)
			if c.kind == kindStruct {
				walk(key, c)
			}
		}
	}
	walk("", s.root)
	sort.Strings(out)
	return out
}

// lookup finds the node of a dotted key through structs.
func (s *Schema) lookup(key string) *node {
	n := s.root
	for _, part := range strings.Split(key, ".") {
		if n.kind != kindStruct || n.fields[part] == nil {
			return nil
		}
		n = n.fields[part]
	}
	return n
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
