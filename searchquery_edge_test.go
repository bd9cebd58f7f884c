package snowclaw_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// searchEdges are the only places a search string is parsed: the
// websocket (every REQ and COUNT filter), the HTTP API and MCP (the
// memory service), and the command-line client, which sets its --explain
// flag on the parsed query before sending it. Everything between an edge
// and the index takes the parsed value (snowclaw.Filter), so one search
// is parsed once.
var searchEdges = map[string][]string{
	"searchquery.go":            {"ParseSearch"}, // ReadFilter
	"relay/conn.go":             {"ReadFilter"},
	"plugins/memory/search.go":  {"ParseSearch"},
	"cmd/snowclaw/searchcmd.go": {"ParseSearch"},
}

// flagText is a string literal that adds a search extension to text: a
// space, then key:.
var flagText = regexp.MustCompile(`^"\s+(explain|include|tier|t|topic|source|model|group|since|until|min_confidence):`)

// TestSearch_ParsedOnceAtTheEdge: no code parses a search string outside
// the edges, and no code adds a flag by appending text to a query (which
// lands inside a quote the client left open, or is read once more).
func TestSearch_ParsedOnceAtTheEdge(t *testing.T) {
	fset := token.NewFileSet()
	found := map[string][]string{}
	var appended []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				if name == "ParseSearch" || name == "ReadFilter" {
					found[path] = append(found[path], name)
				}
			case *ast.BinaryExpr:
				if n.Op == token.ADD && path != "searchquery.go" { // String writes the flags
					appended = append(appended, flagLits(fset, n.X, n.Y)...)
				}
			case *ast.AssignStmt:
				if n.Tok == token.ADD_ASSIGN && path != "searchquery.go" {
					appended = append(appended, flagLits(fset, n.Rhs...)...)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for path, calls := range found {
		if !slices.Equal(calls, searchEdges[path]) {
			t.Errorf("%s parses a search string (%v): take the parsed query (snowclaw.Filter) from the edge instead", path, calls)
		}
	}
	for path := range searchEdges {
		if len(found[path]) == 0 {
			t.Errorf("the edge %s parses no search any more: update searchEdges", path)
		}
	}
	for _, at := range appended {
		t.Errorf("%s appends a search flag to text: set it on the parsed query", at)
	}
}

func flagLits(fset *token.FileSet, exprs ...ast.Expr) []string {
	var out []string
	for _, e := range exprs {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING && flagText.MatchString(lit.Value) {
			out = append(out, fset.Position(lit.Pos()).String())
		}
	}
	return out
}
