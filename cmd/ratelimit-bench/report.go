package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// header describes the workload in one line, for the top of the table.
func header(w workload, backend string) string {
	return fmt.Sprintf("%d checks round-robin over %d keys, policy %s, manual clock from %s advancing %s per check, backend %s",
		w.Checks, w.Keys, w.Policy.String(), w.Start.UTC().Format(time.RFC3339Nano), w.Step, backend)
}

// writeTable prints the rows as an aligned table under a header naming the
// workload.
func writeTable(out io.Writer, w workload, backend string, rows []result) error {
	var b strings.Builder
	b.WriteString(header(w, backend))
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-15s %10s %9s %13s %10s %10s\n", "ALGORITHM", "ALLOWED", "ALLOWED%", "CHECKS/S", "P50", "P99")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-15s %10d %8.2f%% %13s %10s %10s\n",
			r.Algorithm, r.Allowed, r.AllowedPct(), groupThousands(int64(r.ChecksPerSec()+0.5)), r.P50, r.P99)
	}
	b.WriteString("\nlatency: wall-clock time of each Limiter.Allow call; checks/s: checks divided by the time spent inside those calls\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int64) string {
	if n < 0 {
		return "-" + groupThousands(-n)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// jsonReport is the -json document.
type jsonReport struct {
	Workload jsonWorkload `json:"workload"`
	Results  []jsonResult `json:"results"`
}

type jsonWorkload struct {
	Checks  int    `json:"checks"`
	Keys    int    `json:"keys"`
	Policy  string `json:"policy"`
	StepNs  int64  `json:"step_ns"`
	Start   string `json:"start"`
	Backend string `json:"backend"`
}

type jsonResult struct {
	Algorithm    string  `json:"algorithm"`
	Checks       int     `json:"checks"`
	Allowed      int     `json:"allowed"`
	AllowedPct   float64 `json:"allowed_pct"`
	ChecksPerSec float64 `json:"checks_per_sec"`
	P50Ns        int64   `json:"p50_ns"`
	P99Ns        int64   `json:"p99_ns"`
}

// writeJSON prints the workload and the rows as one JSON document.
func writeJSON(out io.Writer, w workload, backend string, rows []result) error {
	doc := jsonReport{
		Workload: jsonWorkload{
			Checks: w.Checks, Keys: w.Keys, Policy: w.Policy.String(), StepNs: int64(w.Step),
			Start: w.Start.UTC().Format(time.RFC3339Nano), Backend: backend,
		},
		Results: make([]jsonResult, len(rows)),
	}
	for i, r := range rows {
		doc.Results[i] = jsonResult{
			Algorithm: string(r.Algorithm), Checks: r.Checks, Allowed: r.Allowed, AllowedPct: r.AllowedPct(),
			ChecksPerSec: r.ChecksPerSec(), P50Ns: int64(r.P50), P99Ns: int64(r.P99),
		}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
