package render

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// SVG geometry.
const (
	svgW, svgH                       = 720, 300
	padL, padR, padT, padB           = 64, 16, 36, 64
	plotW, plotH                     = svgW - padL - padR, svgH - padT - padB
	yTicks                           = 4
	maxXTicks                        = 8
	seriesColors                     = "#1f6feb,#d1242f,#6e7781,#1a7f37"
	svgNS                            = "http://www.w3.org/2000/svg"
	fontStack                        = "-apple-system,BlinkMacSystemFont,Segoe UI,Helvetica,Arial,sans-serif"
	axisColor, gridColor, labelColor = "#57606a", "#d0d7de", "#24292f"
)

func color(i int) string { return strings.Split(seriesColors, ",")[i%4] }

// esc escapes text for XML and HTML alike (&, <, >, ' and ").
func esc(s string) string { return html.EscapeString(s) }

// niceMax rounds the largest value up to 1, 2 or 5 × 10^k, at least 1.
func niceMax(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// SVG draws c as one self-contained <svg> element: a title, labelled axes
// (class "x-label" and "y-label"), tick labels, grid lines, the data and a
// legend. It references nothing outside itself.
func SVG(c Chart) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns=%q class="chart" data-metric=%q viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label=%q font-family=%q font-size="12">`,
		svgNS, c.Metric, svgW, svgH, svgW, svgH, esc(c.Title), fontStack)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="600" fill=%q>%s</text>`, padL, labelColor, esc(c.Title))
	top := 0.0
	n := 0
	for _, s := range c.Series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			top = math.Max(top, v)
		}
	}
	top = niceMax(top)
	y := func(v float64) float64 { return float64(padT) + float64(plotH)*(1-v/top) }
	// Grid and y ticks: 4 by default, 5 or 2 when that gives whole steps.
	ticks := yTicks
	for _, n := range []int{4, 5, 2} {
		if step := top / float64(n); step == math.Trunc(step) {
			ticks = n
			break
		}
	}
	for i := 0; i <= ticks; i++ {
		v := top * float64(i) / float64(ticks)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke=%q stroke-width="1"/>`, padL, y(v), padL+plotW, y(v), gridColor)
		fmt.Fprintf(&b, `<text class="y-tick" x="%d" y="%.1f" text-anchor="end" fill=%q>%s</text>`, padL-6, y(v)+4, axisColor, num(v))
	}
	// Axes.
	fmt.Fprintf(&b, `<line class="x-axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke=%q stroke-width="1.5"/>`, padL, padT+plotH, padL+plotW, padT+plotH, axisColor)
	fmt.Fprintf(&b, `<line class="y-axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke=%q stroke-width="1.5"/>`, padL, padT, padL, padT+plotH, axisColor)
	fmt.Fprintf(&b, `<text class="x-label" x="%d" y="%d" text-anchor="middle" fill=%q>%s</text>`, padL+plotW/2, svgH-8, labelColor, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="y-label" transform="translate(14 %d) rotate(-90)" text-anchor="middle" fill=%q>%s</text>`, padT+plotH/2, labelColor, esc(c.YLabel))
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill=%q>no data in this window</text>`, padL+plotW/2, padT+plotH/2, axisColor)
		b.WriteString(`</svg>`)
		return b.String()
	}
	if c.Bar {
		drawBars(&b, c, y, n)
	} else {
		drawLines(&b, c, y, n)
	}
	// Legend.
	if len(c.Series) > 1 {
		x := padL + plotW
		for i := len(c.Series) - 1; i >= 0; i-- {
			name := c.Series[i].Name
			x -= 18 + 7*len(name)
			fmt.Fprintf(&b, `<rect x="%d" y="10" width="10" height="10" fill=%q/><text class="legend" x="%d" y="19" fill=%q>%s</text>`, x, color(i), x+14, labelColor, esc(name))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// tickCharWidth is the width one character of a 12-px tick label takes at
// most (digits, '-' and ':' in the font stack), and tickGap the space kept
// between two labels: labels are spaced by their own width so they never
// overlap, whatever the number of bars or the time span.
const (
	tickCharWidth = 7.5
	tickGap       = 12
)

// labelWidth is the width tick label s takes, at most.
func labelWidth(s string) float64 { return float64(len([]rune(s)))*tickCharWidth + tickGap }

func drawBars(b *strings.Builder, c Chart, y func(float64) float64, n int) {
	slot := float64(plotW) / float64(n)
	bw := slot * 0.8 / float64(len(c.Series))
	widest := 0.0
	for i := range n {
		widest = math.Max(widest, labelWidth(label(c.Labels, i)))
	}
	step := max(1, int(math.Ceil(widest/slot)))
	for i := range n {
		x0 := float64(padL) + slot*float64(i) + slot*0.1
		for si, s := range c.Series {
			if i >= len(s.Values) {
				continue
			}
			v := s.Values[i]
			fmt.Fprintf(b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill=%q><title>%s %s: %s</title></rect>`,
				x0+bw*float64(si), y(v), math.Max(bw-1, 1), float64(padT+plotH)-y(v), color(si), esc(label(c.Labels, i)), esc(s.Name), num(v))
		}
		if i%step == 0 {
			fmt.Fprintf(b, `<text class="x-tick" x="%.1f" y="%d" text-anchor="middle" fill=%q>%s</text>`, x0+slot*0.4, padT+plotH+16, axisColor, esc(label(c.Labels, i)))
		}
	}
}

func drawLines(b *strings.Builder, c Chart, y func(float64) float64, n int) {
	if len(c.Times) == 0 {
		return
	}
	t0, t1 := c.Times[0], c.Times[len(c.Times)-1]
	span := t1.Sub(t0).Seconds()
	x := func(i int) float64 {
		if span <= 0 {
			return float64(padL) + float64(plotW)*float64(i)/math.Max(float64(n-1), 1)
		}
		return float64(padL) + float64(plotW)*c.Times[i].Sub(t0).Seconds()/span
	}
	for si, s := range c.Series {
		var pts strings.Builder
		for i, v := range s.Values {
			if i > 0 {
				// Step: hold the previous value until this point.
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(s.Values[i-1]))
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(v))
		}
		dash := ""
		if si == 2 {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<polyline class="series" fill="none" stroke=%q stroke-width="1.5"%s points=%q><title>%s</title></polyline>`,
			color(si), dash, strings.TrimSpace(pts.String()), esc(s.Name))
	}
	// Ticks are evenly spaced in time (not by point index, which crowds
	// them where commits cluster), as many as fit side by side, and each
	// label is printed once.
	layout := "01-02 15:04"
	switch {
	case span < 600:
		layout = "15:04:05"
	case span < 86400:
		layout = "15:04"
	}
	if span <= 0 {
		fmt.Fprintf(b, `<text class="x-tick" x="%.1f" y="%d" text-anchor="middle" fill=%q>%s</text>`, x(0), padT+plotH+16, axisColor, t0.UTC().Format(layout))
		return
	}
	ticks := max(2, min(maxXTicks, int(float64(plotW)/labelWidth(t0.UTC().Format(layout)))+1))
	prev := ""
	for k := range ticks {
		at := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(k) / float64(ticks-1)))
		text := at.UTC().Format(layout)
		if text == prev {
			continue
		}
		prev = text
		fmt.Fprintf(b, `<text class="x-tick" x="%.1f" y="%d" text-anchor="middle" fill=%q>%s</text>`,
			float64(padL)+float64(plotW)*float64(k)/float64(ticks-1), padT+plotH+16, axisColor, text)
	}
}

func label(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return ""
}
