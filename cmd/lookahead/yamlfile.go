package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"lookahead/internal/cli"
)

// decodeYAMLFile decodes b, the file path holding one what (a "scenario",
// a "pricing file"), into out strictly: one document, no unknown keys,
// every value of its key's type. Its errors are bad input naming the
// file, the key's path (grid.redraw.min) and line, and what the key wants
// — in the file's words, not Go's types; hint says where an example is.
func decodeYAMLFile(what, path string, b []byte, out any, hint string) error {
	bad := func(format string, args ...any) error {
		return cli.UsageError{Err: fmt.Errorf("%s %s: "+format, append([]any{what, path}, args...)...)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(out); errors.Is(err, io.EOF) {
		return bad("empty: nothing in it (%s)", hint)
	} else if err != nil {
		return bad("%s", yamlDecodeWords(b, reflect.TypeOf(out).Elem(), err))
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return bad("more than one YAML document (---): write one per file")
	}
	return nil
}

// yamlDecodeWords says which key of b failed to decode into t and why.
func yamlDecodeWords(b []byte, t reflect.Type, err error) string {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return fmt.Sprintf("not YAML: %v", err)
	}
	if key, line, known := unknownYAMLKey(doc.Content[0], t, ""); key != "" {
		return fmt.Sprintf("line %d: %s: unknown key (known here: %s)", line, key, strings.Join(known, ", "))
	}
	key := yamlKeyOf(&doc, t)
	if key == "" {
		key = "(the whole file)"
	}
	return key + ": " + yamlTypeWords(err)
}
