package agent_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// zerologKeys are the keys zerolog writes itself (Msg, Timestamp, Err):
// a field added under one of them repeats the key in the JSON line, and
// jq keeps only one (seen live: a dispatch line with two "message").
var zerologKeys = map[string]bool{"message": true, "level": true, "time": true, "error": true}

// fieldMethods are zerolog's field adders whose first argument is the key.
var fieldMethods = map[string]bool{"Str": true, "Strs": true, "Int": true, "Int64": true, "Uint64": true, "Bool": true,
	"Float64": true, "Dur": true, "Time": true, "Interface": true, "Any": true, "RawJSON": true, "Stringer": true, "AnErr": true}

// TestNoLogFieldNamedLikeZerologsOwn reads every Go file of the module
// and refuses a log field named "message", "level", "time" or "error".
func TestNoLogFieldNamedLikeZerologsOwn(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			lit, isLit := call.Args[0].(*ast.BasicLit)
			if !ok || !isLit || lit.Kind != token.STRING || !fieldMethods[sel.Sel.Name] {
				return true
			}
			if key, _ := strconv.Unquote(lit.Value); zerologKeys[key] {
				t.Errorf("%s: log field %q repeats a key zerolog writes itself", fset.Position(call.Pos()), key)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
