package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit/metrics"
)

// TestDashboard: the Grafana dashboard is valid JSON, every panel has a
// query, and every metric a query names is one the Collector exports.
func TestDashboard(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("dashboard/ratelimit.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard/ratelimit.json: %v", err)
	}
	c, _ := metrics.New()
	descs := make(chan *prometheus.Desc, 64)
	c.Describe(descs)
	close(descs)
	exported := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for desc := range descs {
		if m := fq.FindStringSubmatch(desc.String()); m != nil {
			exported[m[1]] = true
		}
	}
	if len(d.Panels) < 8 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	name := regexp.MustCompile(`ratelimit_[a-z_]+`)
	seen := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suffix); ok && exported[b] {
						base = b
					}
				}
				if !exported[base] {
					t.Errorf("panel %q queries %s, which the Collector does not export", p.Title, n)
				}
				seen[base] = true
			}
		}
	}
	for n := range exported {
		if !seen[n] {
			t.Errorf("no panel shows %s", n)
		}
	}
}
