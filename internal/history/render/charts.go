package render

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
)

// Chart is one metric drawn as a line chart over time or a bar chart over
// categories. Both the HTML (SVG) and the Markdown (Mermaid) renderers
// draw exactly the charts Charts returns, one per metric.
type Chart struct {
	// Metric is the chart's stable id (data-metric in the HTML).
	Metric string
	Title  string
	XLabel string
	YLabel string
	// Bar selects a bar chart over Labels; otherwise a line chart over
	// Times (Labels are then tick labels of the buckets).
	Bar    bool
	Labels []string
	Times  []time.Time
	Series []Series
}

// Series is one named line or set of bars.
type Series struct {
	Name   string
	Values []float64
}

// Metrics are the chart ids, in the order Charts returns them.
var Metrics = []string{"queue-depth", "seats-in-use", "admissions-per-hour", "wait-distribution", "hold-distribution", "what-if-wait"}

// maxPoints bounds a line chart: longer series are bucketed (each bucket
// keeps its largest value, so a peak is never drawn away).
const maxPoints = 480

// Charts returns the charts of one lock (none without stats).
func Charts(l LockReport) []Chart {
	st := l.Stats
	if st == nil {
		return nil
	}
	var out []Chart
	times, queue, holders, occupied, seats := bucketSeries(st.Series)
	out = append(out, Chart{Metric: "queue-depth", Title: "Queue depth", XLabel: "Time (UTC)", YLabel: "Waiting jobs", Times: times,
		Series: []Series{{Name: "waiting", Values: queue}}})
	out = append(out, Chart{Metric: "seats-in-use", Title: "Seats in use", XLabel: "Time (UTC)", YLabel: "Seats", Times: times,
		Series: []Series{{Name: "holders", Values: holders}, {Name: "holders + reservations", Values: occupied}, {Name: "maxHolders", Values: seats}}})
	var hl []string
	var hv []float64
	for _, h := range st.AdmissionsPerHour {
		hl = append(hl, h.Hour.UTC().Format("01-02 15:00"))
		hv = append(hv, float64(h.Admissions))
	}
	out = append(out, Chart{Metric: "admissions-per-hour", Title: "Admissions per hour", XLabel: "Hour (UTC)", YLabel: "Admissions", Bar: true,
		Labels: hl, Series: []Series{{Name: "admissions", Values: hv}}})
	waits, holds := make([]float64, len(durationBuckets)), make([]float64, len(durationBuckets))
	for _, j := range st.Jobs {
		waits[bucketOf(j.Wait)]++
		if j.Released {
			holds[bucketOf(j.Hold)]++
		}
	}
	var bl []string
	for _, b := range durationBuckets {
		bl = append(bl, b.label)
	}
	out = append(out, Chart{Metric: "wait-distribution", Title: "Waits (queue join to admission)", XLabel: "Wait", YLabel: "Jobs", Bar: true,
		Labels: bl, Series: []Series{{Name: "jobs", Values: waits}}})
	out = append(out, Chart{Metric: "hold-distribution", Title: "Hold times (admission to release)", XLabel: "Hold", YLabel: "Jobs", Bar: true,
		Labels: bl, Series: []Series{{Name: "jobs", Values: holds}}})
	if wi := l.WhatIf; wi != nil {
		var labels []string
		p50, p95 := []float64{}, []float64{}
		for _, sc := range wi.Scenarios {
			label := plural(sc.Seats, "seat")
			if sc.Observed {
				label += " (now)"
			}
			labels = append(labels, label)
			p50 = append(p50, round1(sc.Wait.P50/60))
			p95 = append(p95, round1(sc.Wait.P95/60))
		}
		out = append(out, Chart{Metric: "what-if-wait", Title: "What if: waits with other seat counts", XLabel: "Seats", YLabel: "Wait (minutes)", Bar: true,
			Labels: labels, Series: []Series{{Name: "p50", Values: p50}, {Name: "p95", Values: p95}}})
	}
	return out
}

type durationBucket struct {
	upTo  time.Duration
	label string
}

var durationBuckets = []durationBucket{
	{time.Minute, "< 1m"}, {5 * time.Minute, "1-5m"}, {15 * time.Minute, "5-15m"}, {30 * time.Minute, "15-30m"},
	{time.Hour, "30-60m"}, {2 * time.Hour, "1-2h"}, {4 * time.Hour, "2-4h"}, {math.MaxInt64, "4h+"},
}

func bucketOf(d time.Duration) int {
	for i, b := range durationBuckets {
		if d < b.upTo {
			return i
		}
	}
	return len(durationBuckets) - 1
}

// bucketSeries reduces a step series to at most maxPoints points.
func bucketSeries(ps []history.Point) (times []time.Time, queue, holders, occupied, seats []float64) {
	if len(ps) == 0 {
		return nil, nil, nil, nil, nil
	}
	per := (len(ps) + maxPoints - 1) / maxPoints
	for i := 0; i < len(ps); i += per {
		end := min(i+per, len(ps))
		var q, h, o, s float64
		for _, p := range ps[i:end] {
			q = math.Max(q, float64(p.Queue))
			h = math.Max(h, float64(p.Holders))
			o = math.Max(o, float64(p.Holders+p.Reservations))
			s = math.Max(s, float64(p.Seats))
		}
		times = append(times, ps[i].Time)
		queue, holders, occupied, seats = append(queue, q), append(holders, h), append(occupied, o), append(seats, s)
	}
	return times, queue, holders, occupied, seats
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// dur renders seconds compactly: 42s, 7m05s, 3h12m.
func dur(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
