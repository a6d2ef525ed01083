package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
)

const css = `body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:#24292f;margin:24px auto;max-width:1100px;padding:0 16px;line-height:1.45}
h1{font-size:22px}h2{font-size:19px;border-bottom:1px solid #d0d7de;padding-bottom:6px;margin-top:32px}h3{font-size:16px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #d0d7de;padding:4px 10px;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f6f8fa}.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;min-width:130px}
.card b{display:block;font-size:20px}.ok{color:#1a7f37}.bad{color:#d1242f}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px;max-height:420px}
.side{display:flex;gap:12px}.side>div{flex:1;min-width:0}svg.chart{display:block;margin:12px 0;max-width:100%;height:auto}code{font-size:12px}`

// HTML writes the report as one self-contained page: inline CSS and one
// inline SVG per chart, no script, font, image, stylesheet or other
// external reference, so it opens offline. The markup is well-formed XML
// (XHTML syntax) so any XML parser can check it.
func HTML(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	fmt.Fprintf(&b, "<title>Build lock history: %s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(r.Repository), css)
	fmt.Fprintf(&b, "<h1>Build lock history of <code>%s</code> (branch <code>%s</code>)</h1>\n", esc(r.Repository), esc(r.Branch))
	fmt.Fprintf(&b, "<p>Generated %s UTC.</p>\n", r.GeneratedAt.UTC().Format(time.RFC3339))
	for _, l := range r.Locks {
		htmlLock(&b, l)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func htmlLock(b *strings.Builder, l LockReport) {
	fmt.Fprintf(b, "<h2>Lock <code>%s</code></h2>\n<p>%s</p>\n", esc(l.Lock), esc(l.Headline()))
	v, st := l.Verify, l.Stats
	b.WriteString("<div class=\"cards\">\n")
	card := func(label, value string, good bool) {
		cls := ""
		if !good {
			cls = " class=\"bad\""
		}
		fmt.Fprintf(b, "<div class=\"card\"><b%s>%s</b>%s</div>\n", cls, esc(value), esc(label))
	}
	if v != nil {
		card("commits verified", fmt.Sprint(v.Commits), v.Status != history.StatusIncomplete)
		card("violations", fmt.Sprint(v.Violations()), v.Violations() == 0)
	}
	if st != nil {
		card("wait p50", dur(st.Wait.P50), true)
		card("wait p95", dur(st.Wait.P95), true)
		card("wait p99", dur(st.Wait.P99), true)
		card("seat utilization", pct(st.Utilization), true)
		card("seats reserved (cooldown, quarantine)", pct(st.ReservedShare), true)
		card("admissions", fmt.Sprint(st.Admissions), true)
	}
	b.WriteString("</div>\n")
	if v != nil {
		htmlVerify(b, v)
	}
	if st == nil {
		return
	}
	fmt.Fprintf(b, "<h3>Seat demand from %s to %s</h3>\n", st.From.UTC().Format(time.RFC3339), st.To.UTC().Format(time.RFC3339))
	b.WriteString("<table>\n<tr><th>Event</th><th>Count</th></tr>\n")
	for _, row := range eventRows(st) {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td></tr>\n", esc(row.name), row.n)
	}
	b.WriteString("</table>\n")
	for _, c := range Charts(l) {
		b.WriteString(SVG(c))
		b.WriteString("\n")
	}
	if len(st.Repositories) > 0 {
		b.WriteString("<h3>By repository</h3>\n<table>\n<tr><th>Repository</th><th>Admissions</th><th>Gave up</th><th>Wait p50</th><th>Wait p95</th><th>Wait p99</th><th>Hold p50</th><th>Hold p95</th></tr>\n")
		for _, r := range st.Repositories {
			fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				esc(r.Repository), r.Admissions, r.GaveUp, dur(r.Wait.P50), dur(r.Wait.P95), dur(r.Wait.P99), dur(r.Hold.P50), dur(r.Hold.P95))
		}
		b.WriteString("</table>\n")
	}
	htmlSeats(b, st)
	if wi := l.WhatIf; wi != nil {
		b.WriteString("<h3>What if the lock had other seat counts</h3>\n")
		fmt.Fprintf(b, "<p>The %d admitted jobs of the window, replayed through the build lock's own transitions with each seat count (instant handoff; %d jobs that gave up are not replayed). Compare the rows with each other.</p>\n", wi.Jobs, wi.Skipped)
		b.WriteString("<table>\n<tr><th>Seats</th><th>Wait p50</th><th>Wait p95</th><th>Wait p99</th><th>Mean wait</th><th>Longest queue</th><th>Utilization</th></tr>\n")
		for _, sc := range wi.Scenarios {
			name := plural(sc.Seats, "seat")
			if sc.Observed {
				name += " (observed)"
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
				esc(name), dur(sc.Wait.P50), dur(sc.Wait.P95), dur(sc.Wait.P99), dur(sc.Wait.Mean), sc.MaxQueue, pct(sc.Utilization))
		}
		b.WriteString("</table>\n")
		if rows := LabelWhatIf(wi); len(rows) > 0 {
			b.WriteString("<h3>What if one seat more carried each label</h3>\n<p>The observed seat list replayed, then with one seat added that carries the label alone. Waits of the jobs that asked for the label, now and with the extra seat.</p>\n")
			b.WriteString("<table>\n<tr><th>Label</th><th>Seats with it</th><th>Its jobs' wait p50</th><th>Its jobs' wait p95</th><th>Every job's wait p95</th></tr>\n")
			for _, r := range rows {
				fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d → %d</td><td>%s → %s</td><td>%s → %s</td><td>%s → %s</td></tr>\n", esc(r.Label), r.Seats, r.Seats+1,
					dur(r.Now.P50), dur(r.Then.P50), dur(r.Now.P95), dur(r.Then.P95), dur(r.AllNow.P95), dur(r.AllThen.P95))
			}
			b.WriteString("</table>\n")
		}
	}
}

func htmlVerify(b *strings.Builder, v *history.Result) {
	cls, word := "ok", "clean"
	switch v.Status {
	case history.StatusViolations:
		cls, word = "bad", "violations found"
	case history.StatusIncomplete:
		cls, word = "bad", "incomplete: "+v.Incomplete
	}
	fmt.Fprintf(b, "<h3>Verification: <span class=\"%s\">%s</span></h3>\n", cls, esc(word))
	if f := v.FirstViolation; f != nil {
		fmt.Fprintf(b, "<p>First violation: <b>%s</b> at commit <code>%s</code> (%s, by %s): %s</p>\n",
			esc(string(f.Rule)), esc(f.Commit), f.Time.UTC().Format(time.RFC3339), esc(f.Author), esc(f.Detail))
		fmt.Fprintf(b, "<div class=\"side\"><div><h4>Before</h4><pre>%s</pre></div><div><h4>After</h4><pre>%s</pre></div></div>\n", esc(f.Before), esc(f.After))
	}
	if len(v.Findings) > 0 {
		b.WriteString("<table>\n<tr><th>Commit</th><th>Rule</th><th>Detail</th></tr>\n")
		for i, f := range v.Findings {
			if i == maxListed {
				fmt.Fprintf(b, "<tr><td colspan=\"3\">… and %d more</td></tr>\n", len(v.Findings)-maxListed)
				break
			}
			ack := ""
			if f.Acknowledged {
				ack = " (acknowledged)"
			}
			fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%s%s</td><td>%s</td></tr>\n", esc(short(f.Commit)), esc(string(f.Rule)), ack, esc(f.Detail))
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("<table>\n<tr><th>Transition</th><th>Commits</th></tr>\n")
	for _, k := range sortedKeys(v.Transitions) {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td></tr>\n", esc(k), v.Transitions[k])
	}
	b.WriteString("</table>\n")
	for _, n := range v.Notes {
		fmt.Fprintf(b, "<p>Note: %s</p>\n", esc(n))
	}
}

// maxListed bounds the findings listed in full.
const maxListed = 50

type eventRow struct {
	id, name string
	n        int
}

func eventRows(st *history.Stats) []eventRow {
	return []eventRow{
		{"admissions", "admissions", st.Admissions}, {"joins", "queue joins", st.Joins},
		{"gave-up", "gave up waiting (timeout or cancellation)", st.GaveUp},
		{"dropped-waiters", "finished waiters dropped by the reaper", st.DroppedWaiters},
		{"reaped-holders", "stale holders reaped", st.ReaperQuarantines},
		{"operator-recoveries", "quarantines recovered by an operator", st.Recoveries},
		{"auto-recoveries", "quarantines auto-recovered by the reaper", st.AutoRecoveries},
		{"reclaims", "same-runner reclaims", st.Reclaims}, {"incidents", "account incidents", st.Incidents},
		{"incident-recoveries", "incident recoveries", st.IncidentRecoveries},
		{"", "longest queue", st.MaxQueue},
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// htmlSeats writes the per-class, per-label-set and per-seat tables (issue
// 25) when the window saw named seats, labels or classes.
func htmlSeats(b *strings.Builder, st *history.Stats) {
	groups := func(title, column string, gs []history.GroupStats) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(b, "<h3>%s</h3>\n<table>\n<tr><th>%s</th><th>Admissions</th><th>Wait p50</th><th>Wait p95</th><th>Wait max</th></tr>\n", esc(title), esc(column))
		for _, g := range gs {
			fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(g.Key), g.Admissions, dur(g.Wait.P50), dur(g.Wait.P95), dur(g.Wait.Max))
		}
		b.WriteString("</table>\n")
	}
	groups("By priority class", "Class", st.Classes)
	groups("By seat labels", "Labels", st.LabelSets)
	if len(st.SeatUse) > 0 {
		b.WriteString("<h3>By seat</h3>\n<table>\n<tr><th>Seat</th><th>Admissions</th><th>Affinity hits</th><th>Utilization</th><th>Reserved</th></tr>\n")
		for _, s := range st.SeatUse {
			fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>\n", esc(s.Seat), s.Admissions, s.AffinityHits, pct(s.Utilization), pct(s.ReservedShare))
		}
		b.WriteString("</table>\n")
	}
}
