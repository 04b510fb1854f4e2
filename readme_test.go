package ratelimit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMarkdownCompiles: every Go block of every Markdown file of the
// repository (the README, docs/, the service's README, ...) is, verbatim,
// the body of an Example function of the repository or a run of lines of
// one, so the documentation's code compiles and, where the Example has an
// Output, runs as shown. Indentation is compared after removing the body's
// own tab.
func TestMarkdownCompiles(t *testing.T) {
	bodies := exampleBodies(t, ".")
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blocksSeen := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(src), -1) {
			blocksSeen++
			block := normalise(b[1])
			found := false
			for _, body := range bodies {
				if strings.Contains(body, block) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: Go block is in no Example function:\n%s", file, b[1])
			}
		}
	}
	if blocksSeen == 0 || !slices.Contains(files, "README.md") {
		t.Fatalf("no Go block found in %v", files)
	}
}

// exampleBodies returns the bodies of the Example functions of every test
// file under root, every module included, dedented by one tab.
func exampleBodies(t *testing.T, root string) []string {
	t.Helper()
	var bodies []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
			lines := strings.Split(string(src[start:end]), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "\t")
			}
			bodies = append(bodies, normalise(strings.Join(lines, "\n")))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// normalise trims trailing white space on every line and blank lines at
// both ends.
func normalise(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
