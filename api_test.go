package hookinbox_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// publicAPIBudget bounds the exported names outside internal/: the
// library's surface (the root package, handlers, handlertest, verify) and
// what the engine packages (ingest, jobs, migrations) export for the
// module's own use. Growing past it means deciding where the new names
// belong, not raising it.
const publicAPIBudget = 550

// TestPublicAPIBudget counts, over non-test files of every importable
// package outside internal/ and cmd/, the exported top-level names and
// the exported methods and fields of exported types.
func TestPublicAPIBudget(t *testing.T) {
	t.Parallel()
	counts := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" {
			return err
		}
		counts[filepath.Dir(path)] += exportedNames(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total, lines := 0, []string{}
	for dir, n := range counts {
		total += n
		lines = append(lines, fmt.Sprintf("%5d %s", n, dir))
	}
	sort.Strings(lines)
	if total > publicAPIBudget {
		t.Errorf("%d exported names outside internal/, budget %d:\n%s", total, publicAPIBudget, strings.Join(lines, "\n"))
	}
	if total < 100 {
		t.Errorf("counted only %d exported names: the walk misses packages:\n%s", total, strings.Join(lines, "\n"))
	}
}

func skipDir(path, name string) bool {
	top := strings.Split(path, string(filepath.Separator))[0]
	switch top {
	case "internal", "cmd", "examples", "drills", "bench", "docs", "deploy":
		return true
	}
	return strings.HasPrefix(name, ".") || name == "testdata"
}

// exportedNames counts f's exported declarations, with the exported
// fields and interface methods of its exported types and the exported
// methods on its exported types.
func exportedNames(f *ast.File) int {
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedReceiver(d.Recv.List[0].Type)) {
				n++
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				n += exportedInSpec(spec)
			}
		}
	}
	return n
}

func exportedInSpec(spec ast.Spec) int {
	switch s := spec.(type) {
	case *ast.ValueSpec:
		n := 0
		for _, name := range s.Names {
			if name.IsExported() {
				n++
			}
		}
		return n
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return 0
		}
		var fields *ast.FieldList
		switch tt := s.Type.(type) {
		case *ast.StructType:
			fields = tt.Fields
		case *ast.InterfaceType:
			fields = tt.Methods
		}
		return 1 + exportedFields(fields)
	}
	return 0
}

func exportedFields(fields *ast.FieldList) int {
	if fields == nil {
		return 0
	}
	n := 0
	for _, field := range fields.List {
		for _, name := range field.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
}

func exportedReceiver(expr ast.Expr) bool {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.IsExported()
		default:
			return false
		}
	}
}
