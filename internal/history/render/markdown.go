package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
)

// maxMermaidPoints bounds the x-axis of a Mermaid chart (the summary
// should stay readable and small).
const maxMermaidPoints = 48

// Markdown writes the report for $GITHUB_STEP_SUMMARY: tables, the first
// violation with both versions, and one Mermaid xychart per chart (GitHub
// renders ```mermaid blocks in Markdown:
// https://github.blog/2022-02-14-include-diagrams-markdown-files-mermaid/).
// Every number is also in a table, so the summary reads the same where a
// chart does not render.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Build lock history of `%s` (`%s`)\n\n", mdCode(r.Repository), mdCode(r.Branch))
	fmt.Fprintf(&b, "Generated %s UTC.\n\n", r.GeneratedAt.UTC().Format(time.RFC3339))
	for _, l := range r.Locks {
		fmt.Fprintf(&b, "### Lock `%s`\n\n**%s**\n\n", mdCode(l.Lock), mdText(l.Headline()))
		if v := l.Verify; v != nil {
			mdVerify(&b, v)
		}
		if st := l.Stats; st != nil {
			fmt.Fprintf(&b, "#### Seat demand, %s to %s UTC\n\n", st.From.UTC().Format("2006-01-02 15:04"), st.To.UTC().Format("2006-01-02 15:04"))
			b.WriteString("| Metric | Value |\n|---|---:|\n")
			fmt.Fprintf(&b, "| wait p50 / p95 / p99 | %s / %s / %s |\n", dur(st.Wait.P50), dur(st.Wait.P95), dur(st.Wait.P99))
			fmt.Fprintf(&b, "| hold p50 / p95 / p99 | %s / %s / %s |\n", dur(st.Hold.P50), dur(st.Hold.P95), dur(st.Hold.P99))
			fmt.Fprintf(&b, "| seat utilization | %s |\n| seats reserved (cooldowns, quarantines) | %s |\n", pct(st.Utilization), pct(st.ReservedShare))
			for _, row := range eventRows(st) {
				fmt.Fprintf(&b, "| %s | %d |\n", row.name, row.n)
			}
			b.WriteString("\n")
			for _, c := range Charts(l) {
				mermaid(&b, c)
			}
			if len(st.Repositories) > 0 {
				b.WriteString("| Repository | Admissions | Gave up | Wait p50 | Wait p95 | Hold p50 |\n|---|---:|---:|---:|---:|---:|\n")
				for _, r := range st.Repositories {
					fmt.Fprintf(&b, "| `%s` | %d | %d | %s | %s | %s |\n", mdCode(r.Repository), r.Admissions, r.GaveUp, dur(r.Wait.P50), dur(r.Wait.P95), dur(r.Hold.P50))
				}
				b.WriteString("\n")
			}
			mdSeats(&b, st)
		}
		if wi := l.WhatIf; wi != nil {
			fmt.Fprintf(&b, "#### What if\n\nThe window's %d admitted jobs replayed through the lock's own transitions (instant handoff) with each seat count:\n\n", wi.Jobs)
			b.WriteString("| Seats | Wait p50 | Wait p95 | Wait p99 | Longest queue | Utilization |\n|---|---:|---:|---:|---:|---:|\n")
			for _, sc := range wi.Scenarios {
				name := fmt.Sprint(sc.Seats)
				if sc.Observed {
					name += " (observed)"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s |\n", name, dur(sc.Wait.P50), dur(sc.Wait.P95), dur(sc.Wait.P99), sc.MaxQueue, pct(sc.Utilization))
			}
			b.WriteString("\n")
			if rows := LabelWhatIf(wi); len(rows) > 0 {
				b.WriteString("With one seat more carrying each label (the observed seat list replayed, then one seat added):\n\n")
				b.WriteString("| Label | Seats with it | Its jobs' wait p50 | Its jobs' wait p95 | Every job's wait p95 |\n|---|---:|---:|---:|---:|\n")
				for _, r := range rows {
					fmt.Fprintf(&b, "| `%s` | %d → %d | %s → %s | %s → %s | %s → %s |\n", mdCode(r.Label), r.Seats, r.Seats+1,
						dur(r.Now.P50), dur(r.Then.P50), dur(r.Now.P95), dur(r.Then.P95), dur(r.AllNow.P95), dur(r.AllThen.P95))
				}
				b.WriteString("\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdVerify(b *strings.Builder, v *history.Result) {
	fmt.Fprintf(b, "Verification: **%s** over %s.\n\n", v.Status, plural(v.Commits, "commit"))
	if v.Status == history.StatusIncomplete {
		fmt.Fprintf(b, "> [!CAUTION]\n> The history could not be verified completely: %s\n\n", mdText(v.Incomplete))
	}
	if f := v.FirstViolation; f != nil {
		fmt.Fprintf(b, "> [!CAUTION]\n> First violation: **%s** at commit `%s` (%s UTC, by %s): %s\n\n",
			f.Rule, f.Commit, f.Time.UTC().Format("2006-01-02 15:04:05"), mdText(f.Author), mdText(f.Detail))
		fmt.Fprintf(b, "<details><summary>The two versions</summary>\n\nBefore:\n\n```json\n%s\n```\n\nAfter:\n\n```json\n%s\n```\n\n</details>\n\n",
			fence(f.Before), fence(f.After))
	}
	if len(v.Findings) > 1 {
		b.WriteString("| Commit | Rule | Detail |\n|---|---|---|\n")
		for i, f := range v.Findings {
			if i == maxListed {
				fmt.Fprintf(b, "| … | | %d more |\n", len(v.Findings)-maxListed)
				break
			}
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", short(f.Commit), f.Rule, mdText(f.Detail))
		}
		b.WriteString("\n")
	}
	var parts []string
	for _, k := range sortedKeys(v.Transitions) {
		parts = append(parts, fmt.Sprintf("%s %d", k, v.Transitions[k]))
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "Transitions: %s.\n\n", strings.Join(parts, ", "))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(b, "- %s\n", mdText(n))
	}
	if len(v.Notes) > 0 {
		b.WriteString("\n")
	}
}

// mermaid draws c as an xychart (bar or line), at most maxMermaidPoints
// wide.
func mermaid(b *strings.Builder, c Chart) {
	labels := c.Labels
	series := c.Series
	if !c.Bar {
		labels, series = thin(c)
	}
	if len(labels) == 0 {
		return
	}
	top := 0.0
	for _, s := range series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	b.WriteString("```mermaid\nxychart-beta\n")
	fmt.Fprintf(b, "  title %q\n", mermaidText(c.Title))
	quoted := make([]string, len(labels))
	for i, l := range labels {
		quoted[i] = fmt.Sprintf("%q", mermaidText(l))
	}
	fmt.Fprintf(b, "  x-axis %q [%s]\n", mermaidText(c.XLabel), strings.Join(quoted, ", "))
	fmt.Fprintf(b, "  y-axis %q 0 --> %s\n", mermaidText(c.YLabel), num(niceMax(top)))
	for _, s := range series {
		vals := make([]string, len(s.Values))
		for i, v := range s.Values {
			vals[i] = num(v)
		}
		kind := "line"
		if c.Bar {
			kind = "bar"
		}
		fmt.Fprintf(b, "  %s [%s]\n", kind, strings.Join(vals, ", "))
	}
	b.WriteString("```\n\n")
	if len(series) > 1 {
		names := make([]string, len(series))
		for i, s := range series {
			names[i] = s.Name
		}
		fmt.Fprintf(b, "_Series, in order: %s._\n\n", mdText(strings.Join(names, ", ")))
	}
}

// thin buckets a line chart to maxMermaidPoints time labels (largest value
// per bucket).
func thin(c Chart) ([]string, []Series) {
	n := len(c.Times)
	if n == 0 {
		return nil, nil
	}
	per := (n + maxMermaidPoints - 1) / maxMermaidPoints
	layout := "01-02 15:04"
	if c.Times[n-1].Sub(c.Times[0]) < 24*time.Hour {
		layout = "15:04"
	}
	var labels []string
	out := make([]Series, len(c.Series))
	for i := 0; i < n; i += per {
		labels = append(labels, c.Times[i].UTC().Format(layout))
		for si, s := range c.Series {
			m := 0.0
			for _, v := range s.Values[i:min(i+per, len(s.Values))] {
				m = max(m, v)
			}
			out[si].Name = s.Name
			out[si].Values = append(out[si].Values, m)
		}
	}
	return labels, out
}

// mermaidText keeps letters, digits, spaces and a few marks.
func mermaidText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" .,:;()/+-%<>_", r) {
			return r
		}
		return '-'
	}, s)
}

// mdText escapes Markdown and HTML in one line of text.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "|", "\\|", "*", "\\*", "_", "\\_", "`", "\\`", "<", "&lt;", ">", "&gt;", "[", "\\[", "]", "\\]", "\n", " ", "\r", " ")
	return r.Replace(s)
}

// mdCode makes s safe inside a single-backtick code span.
func mdCode(s string) string { return strings.NewReplacer("`", "'", "\n", " ").Replace(s) }

// fence keeps a fenced block from being closed early.
func fence(s string) string { return strings.ReplaceAll(s, "```", "`‍``") }

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mdSeats writes the per-class, per-label-set and per-seat tables (issue
// 25) when the window saw named seats, labels or classes.
func mdSeats(b *strings.Builder, st *history.Stats) {
	groups := func(title string, gs []history.GroupStats) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(b, "| %s | Admissions | Wait p50 | Wait p95 | Wait max |\n|---|---:|---:|---:|---:|\n", title)
		for _, g := range gs {
			fmt.Fprintf(b, "| `%s` | %d | %s | %s | %s |\n", mdCode(g.Key), g.Admissions, dur(g.Wait.P50), dur(g.Wait.P95), dur(g.Wait.Max))
		}
		b.WriteString("\n")
	}
	groups("Priority class", st.Classes)
	groups("Seat labels", st.LabelSets)
	if len(st.SeatUse) > 0 {
		b.WriteString("| Seat | Admissions | Affinity hits | Utilization | Reserved |\n|---|---:|---:|---:|---:|\n")
		for _, s := range st.SeatUse {
			fmt.Fprintf(b, "| `%s` | %d | %d | %s | %s |\n", mdCode(s.Seat), s.Admissions, s.AffinityHits, pct(s.Utilization), pct(s.ReservedShare))
		}
		b.WriteString("\n")
	}
}
