package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"os"
	"strconv"
	"time"
)

// plotColors are the curves' colours, one per algorithm in row order.
var plotColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"}

// writePlotFile writes the SVG plot of rows to path.
func writePlotFile(path string, w workload, backend string, rows []result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = writePlot(bw, w, backend, rows)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-plot %s: %w", path, err)
	}
	return nil
}

// writePlot draws, for each row, the checks admitted per second of
// simulated time: the same nominal policy, very different traffic let
// through depending on the algorithm. The SVG is self-contained, with no
// script and no external reference.
func writePlot(out io.Writer, w workload, backend string, rows []result) error {
	const (
		width, height           = 960, 460
		left, right, top, below = 70, 250, 50, 60
	)
	pw, ph := float64(width-left-right), float64(height-top-below)
	var maxRate float64
	var span time.Duration
	for _, r := range rows {
		for _, n := range r.Admitted {
			maxRate = max(maxRate, float64(n)/r.Bucket.Seconds())
		}
		span = max(span, r.Bucket*time.Duration(len(r.Admitted)))
	}
	offered := 1 / w.Step.Seconds() // checks per second of simulated time
	if w.Step <= 0 {
		offered = 0
	}
	maxRate = max(maxRate, offered, 1)
	yTop := niceCeil(maxRate * 1.05)
	x := func(t time.Duration) float64 { return float64(left) + pw*t.Seconds()/max(span.Seconds(), 1e-9) }
	y := func(rate float64) float64 { return float64(top) + ph*(1-rate/yTop) }

	b := bufio.NewWriter(out)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	title := fmt.Sprintf("Admitted checks per second: %s, %d keys, one check every %s (%s store)", w.Policy, w.Keys, w.Step, backend)
	fmt.Fprintf(b, `<text x="%d" y="24" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	// Axes, ticks and grid.
	for i := 0; i <= 5; i++ {
		rate := yTop * float64(i) / 5
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y(rate), width-right, y(rate))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(rate)+4, strconv.FormatFloat(rate, 'f', -1, 64))
	}
	for i := 0; i <= 10; i++ {
		t := span * time.Duration(i) / 10
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(t), height-below+18, strconv.FormatFloat(t.Seconds(), 'f', -1, 64))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, height-below, width-right, height-below)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, height-below)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">simulated time (s)</text>`+"\n", float64(left)+pw/2, height-below+40)
	fmt.Fprintf(b, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">admitted per second</text>`+"\n", float64(top)+ph/2, float64(top)+ph/2)
	if offered > 0 {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black" stroke-dasharray="4 4"/>`+"\n", left, y(offered), width-right, y(offered))
	}
	// One curve per algorithm, and its legend entry.
	for i, r := range rows {
		color := plotColors[i%len(plotColors)]
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="`, color)
		for j, n := range r.Admitted {
			if j > 0 {
				b.WriteByte(' ')
			}
			mid := r.Bucket*time.Duration(j) + r.Bucket/2
			fmt.Fprintf(b, "%.1f,%.1f", x(mid), y(float64(n)/r.Bucket.Seconds()))
		}
		b.WriteString("\"/>\n")
		ly := top + 10 + 36*i
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", width-right+14, ly, width-right+38, ly, color)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", width-right+44, ly+4, html.EscapeString(string(r.Algorithm)))
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#555">%d admitted (%.1f%%)</text>`+"\n", width-right+44, ly+18, r.Allowed, r.AllowedPct())
	}
	if offered > 0 {
		ly := top + 10 + 36*len(rows)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black" stroke-dasharray="4 4"/>`+"\n", width-right+14, ly, width-right+38, ly)
		fmt.Fprintf(b, `<text x="%d" y="%d">offered load</text>`+"\n", width-right+44, ly+4)
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
