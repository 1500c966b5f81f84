package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
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
//   - an integer constant changed (0 → 1, 1 → 0, n → n+1, or n → n-1 for
//     the largest value of an integer type, 0xff say);
//   - a statement dropped: a call, an assignment (not a declaration), an
//     increment; not one that holds every use of a variable or an import,
//     which would leave it unused (see lastUses);
//   - an error returned made nil (return …, err → return …, nil), in a
//     function whose last result is an error.
//
// Each edit is made on the text at the node's offsets, so the rest of the
// file stays byte for byte. A mutant may still not compile (a constant
// made too large for its type); the run builds it first and counts it
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
	uses := lastUses(f, off)
	dropStmts := func(list []ast.Stmt) {
		for _, s := range list {
			if uses.only(off(s.Pos()), off(s.End())) {
				continue
			}
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
					switch {
					case v == 1:
						to = 0
					case atTypeMax(v):
						to = v - 1 // one more would not fit a byte or its kin
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
				nilErrors(n.Type, n.Body, off, add, uses)
			}
		case *ast.FuncLit:
			nilErrors(n.Type, n.Body, off, add, uses)
		}
		return true
	})
	return ms, nil
}

// atTypeMax reports whether v is the largest value of a sized integer
// type: one more would not compile where the constant has that type.
func atTypeMax(v int64) bool {
	for _, bits := range []uint{7, 8, 15, 16, 31, 32, 63} {
		if uint64(v) == 1<<bits-1 {
			return true
		}
	}
	return false
}

// nilErrors adds, for a function whose last result is an error, a mutant
// per return statement that makes its error nil. Function literals inside
// body are left to their own call.
func nilErrors(typ *ast.FuncType, body *ast.BlockStmt, off func(token.Pos) int, add func(string, int, int, string), uses uses) {
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
				if uses.only(off(id.Pos()), off(id.End())) {
					return true // its one read: nil would leave it unused
				}
				kind = "return " + id.Name + " → nil"
			}
			add(kind, off(last.Pos()), off(last.End()), "nil")
		}
		return true
	})
}

// uses are where a file reads its local variables and its imports, by
// name: Go refuses a variable that is declared and never read (assigning
// it with = is no read) and an import never used, so a statement that
// holds every read of one cannot be dropped, nor can its one read be
// made nil.
type uses struct {
	// scopes are the function bodies, literals' too, then the file for
	// its imports.
	scopes []useScope
}

type useScope struct {
	start, end int // the span the names are declared in; the file for imports
	decls      map[string][]int
	reads      map[string][]int
}

// lastUses finds the file's imports and each function's local variables
// and where they are read. It goes by name, not by object: a name that a
// function declares twice, or that a function literal inside it declares
// again, counts the reads of both, so a mutant is kept whenever a read of
// that name is left.
func lastUses(f *ast.File, off func(token.Pos) int) uses {
	notReads := map[*ast.Ident]bool{}
	lhs := func(e ast.Expr) {
		if id, ok := e.(*ast.Ident); ok {
			notReads[id] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
				for _, l := range n.Lhs {
					lhs(l)
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				lhs(n.Key)
				lhs(n.Value)
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				notReads[id] = true
			}
		case *ast.SelectorExpr:
			notReads[n.Sel] = true
		case *ast.KeyValueExpr:
			lhs(n.Key)
		}
		return true
	})
	reads := func(root ast.Node, sc useScope) {
		ast.Inspect(root, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false
			}
			if id, ok := n.(*ast.Ident); ok && !notReads[id] {
				if r, ok := sc.reads[id.Name]; ok {
					sc.reads[id.Name] = append(r, off(id.Pos()))
				}
			}
			return true
		})
	}

	var u uses
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body == nil {
			return true
		}
		sc := useScope{start: off(body.Pos()), end: off(body.End()), decls: map[string][]int{}, reads: map[string][]int{}}
		declare := func(e ast.Expr) {
			if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
				sc.decls[id.Name] = append(sc.decls[id.Name], off(id.Pos()))
				sc.reads[id.Name] = []int{}
			}
		}
		ast.Inspect(body, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.FuncLit:
				return false // its own scope
			case *ast.AssignStmt:
				if m.Tok == token.DEFINE {
					for _, l := range m.Lhs {
						declare(l)
					}
				}
			case *ast.RangeStmt:
				if m.Tok == token.DEFINE {
					declare(m.Key)
					declare(m.Value)
				}
			case *ast.ValueSpec:
				for _, id := range m.Names {
					declare(id)
				}
			}
			return true
		})
		reads(body, sc)
		u.scopes = append(u.scopes, sc)
		return true
	})

	imports := useScope{start: 0, end: off(f.End()), decls: map[string][]int{}, reads: map[string][]int{}}
	for _, im := range f.Imports {
		name := ""
		if im.Name != nil {
			name = im.Name.Name
		} else if p, err := strconv.Unquote(im.Path.Value); err == nil {
			name = p[strings.LastIndex(p, "/")+1:]
		}
		if name != "" && name != "_" && name != "." {
			imports.decls[name] = append(imports.decls[name], off(im.Pos()))
			imports.reads[name] = []int{}
		}
	}
	reads(f, imports)
	u.scopes = append(u.scopes, imports)
	return u
}

// only reports whether the span [start, end) holds every read (and at
// least one) of a name declared outside it, in a scope around it.
func (u uses) only(start, end int) bool {
	outside := func(at int) bool { return at < start || at >= end }
	for _, sc := range u.scopes {
		if start < sc.start || end > sc.end {
			continue
		}
		for name, rs := range sc.reads {
			if len(rs) > 0 && !slices.ContainsFunc(rs, outside) && slices.ContainsFunc(sc.decls[name], outside) {
				return true
			}
		}
	}
	return false
}
