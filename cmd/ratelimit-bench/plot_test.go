package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlot: -plot writes a well-formed SVG with one curve and one legend
// entry per algorithm, and the curves tell the algorithms apart: the burst
// algorithms admit the whole seed workload, the window ones do not.
func TestPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitted.svg")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-checks", "20000", "-keys", "100", "-step", "5ms", "-plot", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(raw))
	curves := 0
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "polyline" {
				curves++
				for _, a := range el.Attr {
					if a.Name.Local == "points" && len(strings.Fields(a.Value)) < 50 {
						t.Fatalf("a curve of %d points", len(strings.Fields(a.Value)))
					}
				}
			}
		case xml.CharData:
			texts = append(texts, string(el))
		}
	}
	if curves != 6 {
		t.Fatalf("%d curves, want 6", curves)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"fixed_window", "sliding_log", "sliding_window", "token_bucket", "gcra", "leaky_bucket", "offered load", "(100.0%)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the plot's text", want)
		}
	}
	if code := run(context.Background(), []string{"-checks", "10", "-plot", filepath.Join(t.TempDir(), "missing", "x.svg")}, io.Discard, &stderr); code != 1 {
		t.Fatalf("an unwritable -plot path: exit %d", code)
	}
}
