package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// goSwaps are the operator mutants: a comparison negated, a bound moved
// by one, a conjunction made a disjunction, and back.
var goSwaps = map[token.Token]token.Token{
	token.EQL:  token.NEQ,
	token.NEQ:  token.EQL,
	token.LSS:  token.LEQ,
	token.LEQ:  token.LSS,
	token.GTR:  token.GEQ,
	token.GEQ:  token.GTR,
	token.LAND: token.LOR,
	token.LOR:  token.LAND,
}

// generateGo returns the mutants of a Go file, found in its syntax tree so
// that each one changes code, never a comment or a string:
//
//   - a comparison or logical operator swapped (goSwaps);
//   - a negation dropped (!x → x);
//   - an integer constant changed (0 → 1, 1 → 0, n → n+1);
//   - a statement dropped: a call, an assignment (not a declaration), an
//     increment;
//   - an error returned made nil (return …, err → return …, nil), in a
//     function whose last result is an error.
//
// Each edit is made on the text at the node's offsets, so the rest of the
// file stays byte for byte. A mutant may not compile (a dropped statement
// leaves a variable unused); the run builds it first and counts it
// invalid.
func generateGo(file, src string) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var ms []Mutant
	add := func(kind string, start, end int, replace string) {
		ms = append(ms, Mutant{File: file, Line: lineAt(src, start), Kind: kind, Start: start, End: end, Replace: replace})
	}
	dropStmts := func(list []ast.Stmt) {
		for _, s := range list {
			var kind string
			switch s := s.(type) {
			case *ast.ExprStmt:
				if _, ok := s.X.(*ast.CallExpr); ok {
					kind = "drop call"
				}
			case *ast.AssignStmt:
				if s.Tok != token.DEFINE {
					kind = "drop assignment"
				}
			case *ast.IncDecStmt:
				kind = "drop " + s.Tok.String()
			}
			if kind != "" {
				add(kind, off(s.Pos()), off(s.End()), "")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BinaryExpr:
			if to, ok := goSwaps[n.Op]; ok {
				at := off(n.OpPos)
				add(n.Op.String()+" → "+to.String(), at, at+len(n.Op.String()), to.String())
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				at := off(n.OpPos)
				add("drop !", at, at+1, "")
			}
		case *ast.BasicLit:
			if n.Kind == token.INT {
				if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
					to := v + 1
					if v == 1 {
						to = 0
					}
					repl := strconv.FormatInt(to, 10)
					add(n.Value+" → "+repl, off(n.Pos()), off(n.End()), repl)
				}
			}
		case *ast.BlockStmt:
			dropStmts(n.List)
		case *ast.CaseClause:
			dropStmts(n.Body)
		case *ast.CommClause:
			dropStmts(n.Body)
		case *ast.FuncDecl:
			if n.Body != nil {
				nilErrors(n.Type, n.Body, off, add)
			}
		case *ast.FuncLit:
			nilErrors(n.Type, n.Body, off, add)
		}
		return true
	})
	return ms, nil
}

// nilErrors adds, for a function whose last result is an error, a mutant
// per return statement that makes its error nil. Function literals inside
// body are left to their own call.
func nilErrors(typ *ast.FuncType, body *ast.BlockStmt, off func(token.Pos) int, add func(string, int, int, string)) {
	if typ.Results == nil || len(typ.Results.List) == 0 {
		return
	}
	fields := typ.Results.List
	if id, ok := fields[len(fields)-1].Type.(*ast.Ident); !ok || id.Name != "error" {
		return
	}
	results := typ.Results.NumFields()
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) != results {
				return true // a bare return, or return f() of f's results
			}
			last := n.Results[len(n.Results)-1]
			if id, ok := last.(*ast.Ident); ok && id.Name == "nil" {
				return true
			}
			kind := "return error → nil"
			if id, ok := last.(*ast.Ident); ok {
				kind = "return " + id.Name + " → nil"
			}
			add(kind, off(last.Pos()), off(last.End()), "nil")
		}
		return true
	})
}
