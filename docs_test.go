package snowclaw_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// privateRef matches what only the people who built the project can
// follow: issue numbers, numbered design seeds, the evaluation files kept
// beside the repository, and the team's own data splits. The repository
// stands alone, so its docs cite its docs/ pages and its eval commands
// name their data with a flag.
var privateRef = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\bissues?\s+#?\d+`,           // an issue by number
	`(^|[\s(\[,;])#\d+\b`,         // a bare #N
	`\bseeds?\s+\d{3}\b`,          // a numbered seed
	`\.\./shared\b`,               // files beside the repository
	`\bteam'?s?\s+(dev\s+)?split`, // splits only the team knows
	`\bdev\s+split\b`,
	`\blocomo[-\s]dev\b`,
}, "|"))

// TestDocs_NoPrivateReferences keeps README, docs/, config.example.toml,
// CI's script and every Go comment readable by someone who has only the
// repository.
func TestDocs_NoPrivateReferences(t *testing.T) {
	check := func(path string, line int, text string) {
		if m := privateRef.FindString(text); m != "" {
			t.Errorf("%s:%d: %q cites something outside the repository; cite the docs/ page that states the rule instead", path, line, strings.TrimSpace(m))
		}
	}
	checkText := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			check(path, i+1, l)
		}
	}
	texts := []string{"README.md", "config.example.toml", filepath.Join(".ci", "run")}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(docs) < 5 {
		t.Fatalf("docs/*.md: %d pages, %v", len(docs), err)
	}
	for _, p := range append(texts, docs...) {
		checkText(p)
	}

	fset := token.NewFileSet()
	goFiles := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		goFiles++
		for _, g := range f.Comments {
			for _, c := range g.List {
				line := fset.Position(c.Slash).Line
				for i, l := range strings.Split(c.Text, "\n") {
					check(path, line+i, l)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if goFiles < 100 {
		t.Fatalf("only %d Go files read", goFiles)
	}
}

// TestDocs_ReadmeLinksEveryPage: a page README does not link is a page a
// newcomer never finds.
func TestDocs_ReadmeLinksEveryPage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docs {
		if !strings.Contains(string(readme), "("+filepath.ToSlash(p)+")") {
			t.Errorf("README.md does not link %s", p)
		}
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md is %d lines: keep it a five-minute read (≤ 250) and move detail to docs/", n)
	}
}

// TestDocs_DataDirIgnored: `go run ./cmd/snowclaw serve`, README's first
// command, writes ./snowclaw-data in the checkout; git must not offer it.
func TestDocs_DataDirIgnored(t *testing.T) {
	b, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "snowclaw-data/" || l == "/snowclaw-data/" || l == "snowclaw-data" {
			return
		}
	}
	t.Error(".gitignore does not ignore snowclaw-data/, the data directory serve makes by default")
}
