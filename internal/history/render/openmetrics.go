package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
)

// OpenMetricsContentType is the media type of OpenMetrics text.
const OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// OpenMetrics writes the report in the OpenMetrics text format
// (https://github.com/OpenObservability/OpenMetrics/blob/main/specification/OpenMetrics.md):
// one family per metric with # TYPE and # HELP, every sample of a family
// together, label values escaped, and the terminating "# EOF". Windowed
// counts are gauges (they describe the window, they are not monotonic);
// waits and holds are summaries with quantile samples, _count and _sum.
func OpenMetrics(w io.Writer, r *Report) error {
	var b strings.Builder
	type sample struct {
		suffix string   // "_count" or "_sum" of a summary
		labels []string // key, value pairs
		value  float64
	}
	family := func(name, typ, help string, samples []sample) {
		if len(samples) == 0 {
			return
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n# HELP %s %s\n", name, typ, name, help)
		for _, s := range samples {
			fmt.Fprintf(&b, "%s%s%s %s\n", name, s.suffix, omLabels(s.labels), omValue(s.value))
		}
	}
	gauge := func(name, help string, f func(l LockReport) (float64, bool)) {
		var ss []sample
		for _, l := range r.Locks {
			if v, ok := f(l); ok {
				ss = append(ss, sample{labels: []string{"lock", l.Lock}, value: v})
			}
		}
		family(name, "gauge", help, ss)
	}
	stats := func(f func(st *history.Stats) float64) func(LockReport) (float64, bool) {
		return func(l LockReport) (float64, bool) {
			if l.Stats == nil {
				return 0, false
			}
			return f(l.Stats), true
		}
	}
	gauge("buildlock_history_verified", "1 when every commit read verified clean and completely, else 0.", func(l LockReport) (float64, bool) {
		if l.Verify == nil {
			return 0, false
		}
		if l.Verify.OK() && l.Remaining == 0 {
			return 1, true
		}
		return 0, true
	})
	gauge("buildlock_history_commits_verified", "Commits of the state file checked in this run.", func(l LockReport) (float64, bool) {
		if l.Verify == nil {
			return 0, false
		}
		return float64(l.Verify.Commits), true
	})
	gauge("buildlock_history_violations", "Findings that are not acknowledged.", func(l LockReport) (float64, bool) {
		if l.Verify == nil {
			return 0, false
		}
		return float64(l.Verify.Violations()), true
	})
	gauge("buildlock_history_seats", "maxHolders in force at the end of the window.", stats(func(st *history.Stats) float64 { return float64(st.Seats) }))
	gauge("buildlock_history_seat_utilization_ratio", "Holder seat-time over seat capacity-time in the window.", stats(func(st *history.Stats) float64 { return st.Utilization }))
	gauge("buildlock_history_seat_reserved_ratio", "Cooldown and quarantine seat-time over capacity-time in the window.", stats(func(st *history.Stats) float64 { return st.ReservedShare }))
	gauge("buildlock_history_queue_max", "Longest queue in the window.", stats(func(st *history.Stats) float64 { return float64(st.MaxQueue) }))
	gauge("buildlock_history_window_end_timestamp_seconds", "End of the report window (Unix time).", stats(func(st *history.Stats) float64 { return float64(st.To.Unix()) }))

	var events []sample
	for _, l := range r.Locks {
		if l.Stats == nil {
			continue
		}
		for _, row := range eventRows(l.Stats) {
			if row.id == "" {
				continue
			}
			events = append(events, sample{labels: []string{"lock", l.Lock, "event", row.id}, value: float64(row.n)})
		}
	}
	family("buildlock_history_events", "gauge", "Events of the window by kind.", events)

	summary := func(name, help string, pick func(l LockReport) []struct {
		labels []string
		d      history.Dist
	}) {
		var ss []sample
		for _, l := range r.Locks {
			for _, x := range pick(l) {
				for _, q := range []struct {
					q string
					v float64
				}{{"0.5", x.d.P50}, {"0.95", x.d.P95}, {"0.99", x.d.P99}} {
					ss = append(ss, sample{labels: append(append([]string{}, x.labels...), "quantile", q.q), value: q.v})
				}
				ss = append(ss, sample{suffix: "_count", labels: x.labels, value: float64(x.d.Count)})
				ss = append(ss, sample{suffix: "_sum", labels: x.labels, value: x.d.Mean * float64(x.d.Count)})
			}
		}
		family(name, "summary", help, ss)
	}
	type dl = struct {
		labels []string
		d      history.Dist
	}
	summary("buildlock_history_wait_seconds", "Waits from queue join to admission in the window.", func(l LockReport) []dl {
		if l.Stats == nil {
			return nil
		}
		return []dl{{[]string{"lock", l.Lock}, l.Stats.Wait}}
	})
	summary("buildlock_history_hold_seconds", "Hold times from admission to release in the window.", func(l LockReport) []dl {
		if l.Stats == nil {
			return nil
		}
		return []dl{{[]string{"lock", l.Lock}, l.Stats.Hold}}
	})
	summary("buildlock_history_repository_wait_seconds", "Waits by consumer repository in the window.", func(l LockReport) []dl {
		if l.Stats == nil {
			return nil
		}
		var out []dl
		for _, rs := range l.Stats.Repositories {
			out = append(out, dl{[]string{"lock", l.Lock, "repository", rs.Repository}, rs.Wait})
		}
		return out
	})
	group := func(key string, gs func(*history.Stats) []history.GroupStats) func(LockReport) []dl {
		return func(l LockReport) []dl {
			if l.Stats == nil {
				return nil
			}
			var out []dl
			for _, g := range gs(l.Stats) {
				out = append(out, dl{[]string{"lock", l.Lock, key, g.Key}, g.Wait})
			}
			return out
		}
	}
	summary("buildlock_history_class_wait_seconds", "Waits of admitted jobs by priority class in the window (named seats, labels and classes).",
		group("class", func(st *history.Stats) []history.GroupStats { return st.Classes }))
	summary("buildlock_history_labels_wait_seconds", "Waits of admitted jobs by seat-label set in the window (any: no labels asked).",
		group("labels", func(st *history.Stats) []history.GroupStats { return st.LabelSets }))
	perSeat := func(name, help string, v func(history.SeatStats) float64) {
		var ss []sample
		for _, l := range r.Locks {
			if l.Stats == nil {
				continue
			}
			for _, su := range l.Stats.SeatUse {
				ss = append(ss, sample{labels: []string{"lock", l.Lock, "seat", su.Seat}, value: v(su)})
			}
		}
		family(name, "gauge", help, ss)
	}
	perSeat("buildlock_history_named_seat_utilization_ratio", "Share of the window a holder had the named seat.", func(s history.SeatStats) float64 { return s.Utilization })
	perSeat("buildlock_history_named_seat_reserved_ratio", "Share of the window a cooldown or quarantine kept the named seat.", func(s history.SeatStats) float64 { return s.ReservedShare })
	perSeat("buildlock_history_named_seat_admissions", "Admissions to the named seat in the window.", func(s history.SeatStats) float64 { return float64(s.Admissions) })
	perSeat("buildlock_history_named_seat_affinity_hits", "Admissions to the named seat on the runner that used it last.", func(s history.SeatStats) float64 { return float64(s.AffinityHits) })
	var whatif []sample
	for _, l := range r.Locks {
		if l.WhatIf == nil {
			continue
		}
		for _, sc := range l.WhatIf.Scenarios {
			for _, q := range []struct {
				q string
				v float64
			}{{"0.5", sc.Wait.P50}, {"0.95", sc.Wait.P95}, {"0.99", sc.Wait.P99}} {
				whatif = append(whatif, sample{labels: []string{"lock", l.Lock, "seats", strconv.Itoa(sc.Seats), "quantile", q.q}, value: q.v})
			}
		}
	}
	family("buildlock_history_whatif_wait_seconds", "gauge", "Waits the window's demand would have had with each seat count (replay).", whatif)
	var byLabel []sample
	for _, l := range r.Locks {
		if l.WhatIf == nil {
			continue
		}
		for _, row := range LabelWhatIf(l.WhatIf) {
			for _, q := range []struct {
				q string
				v float64
			}{{"0.5", row.Then.P50}, {"0.95", row.Then.P95}, {"0.99", row.Then.P99}} {
				byLabel = append(byLabel, sample{labels: []string{"lock", l.Lock, "label", row.Label, "quantile", q.q}, value: q.v})
			}
		}
	}
	family("buildlock_history_whatif_label_wait_seconds", "gauge", "Waits of the jobs asking for a label with one seat more carrying it (replay).", byLabel)
	b.WriteString("# EOF\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func omLabels(kv []string) string {
	if len(kv) == 0 {
		return ""
	}
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1])
		parts = append(parts, kv[i]+`="`+v+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func omValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
