package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// RenderWorkloads prints the workload results as one table: one column per
// workload, one row per figure, then one row per issue target with the
// measured value and PASS or FAIL in each workload it applies to.
func RenderWorkloads(out io.Writer, rs []*Result) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(name, bar string, cell func(r *Result) string) {
		cells := []string{name, bar}
		for _, r := range rs {
			cells = append(cells, cell(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	row("workload (virtual time, poll-seconds 15)", "target", func(r *Result) string { return r.Name })
	row("seats / jobs / schema", "", func(r *Result) string { return fmt.Sprintf("%d / %d / %d", r.Seats, r.Jobs, r.Schema) })
	row("seeds", "", func(r *Result) string { return fmt.Sprint(max(r.Seeds, 1)) })
	row("virtual minutes (measured window)", "", func(r *Result) string {
		return fmt.Sprintf("%.0f (%.0f-%.0f)", r.VirtualMin, r.WindowFromS/60, r.WindowToS/60)
	})
	row("admitted jobs in window", "", func(r *Result) string { return fmt.Sprint(r.Admitted) })
	row("requests / admitted job", "", func(r *Result) string { return f2(r.RequestsPerAdmission) })
	row("  charged / admitted job", "", func(r *Result) string { return f2(r.ChargedPerAdmission) })
	row("  304s / admitted job", "", func(r *Result) string { return f2(r.NotModifiedPerAdmission) })
	row("content writes / admitted job", "", func(r *Result) string { return f2(r.WritesPerAdmission) })
	row("  write attempts / admitted job", "", func(r *Result) string { return f2(r.AttemptsPerAdmission) })
	row("CAS conflicts / admission", "", func(r *Result) string { return f2(r.ConflictsPerAdmission) })
	row("max CAS rounds (one write)", "", func(r *Result) string { return fmt.Sprint(r.MaxCASRounds) })
	row("handoff noticed median s (polls)", "", func(r *Result) string {
		if r.HandoffGap.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f)", r.HandoffGap.MedianS, r.HandoffGap.MedianPol)
	})
	row("handoff noticed p95 s (polls), n", "", func(r *Result) string {
		if r.HandoffGap.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f), n=%d", r.HandoffGap.P95S, r.HandoffGap.P95Pol, r.HandoffGap.N)
	})
	row("handoff noticed max s", "", func(r *Result) string {
		if r.HandoffGap.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", r.HandoffGap.MaxS)
	})
	row("  queue waiters only: median / p95 / max s, n", "", func(r *Result) string {
		if r.QueueHandoffGap.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f / %.2f / %.2f, n=%d", r.QueueHandoffGap.MedianS, r.QueueHandoffGap.P95S, r.QueueHandoffGap.MaxS, r.QueueHandoffGap.N)
	})
	row("job wait (arrival to admitted) median / p95 / max s", "", func(r *Result) string {
		if r.JobWait.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f / %.1f / %.1f", r.JobWait.MedianS, r.JobWait.P95S, r.JobWait.MaxS)
	})
	mixed := func(label string, pick func(r *Result) *Dist) {
		row(label, "", func(r *Result) string {
			d := pick(r)
			if d == nil || d.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f / %.2f / %.2f, n=%d", d.MedianS, d.P95S, d.MaxS, d.N)
		})
	}
	mixed("  reference waiters: noticed median / p95 / max s", func(r *Result) *Dist { return r.HandoffRef })
	mixed("  our waiters: noticed median / p95 / max s", func(r *Result) *Dist { return r.HandoffOurs })
	row("seat-idle-share (handed, not yet noticed)", "", func(r *Result) string {
		if r.SeatTotalS == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%% (%.0f of %.0f seat-s)", r.SeatIdleShare*100, r.SeatIdleS, r.SeatTotalS)
	})
	row("seat utilization while jobs wait", "", func(r *Result) string {
		s := fmt.Sprintf("%.0f%%", r.Utilization*100)
		if r.LiveUtilization < r.Utilization {
			s += fmt.Sprintf(" (live %.0f%%)", r.LiveUtilization*100)
		}
		return s
	})
	row("peak requests/min (all / charged)", "", func(r *Result) string {
		return fmt.Sprintf("%d / %d", r.PeakPerMin, r.PeakCharged)
	})
	row("  peak charged/min, writer installation", "", func(r *Result) string { return fmt.Sprint(r.PeakInstallCharged) })
	row("  mean requests/min (all / charged)", "", func(r *Result) string {
		return fmt.Sprintf("%.0f / %.1f", r.MeanPerMin, r.MeanChargedMin)
	})
	row("  peak content write attempts/min", "", func(r *Result) string { return fmt.Sprint(r.PeakWrites) })
	row("  peak points/min, one identity and endpoint", "", func(r *Result) string { return fmt.Sprint(r.PeakPoints) })
	row("  peak state reads/min (304s included)", "", func(r *Result) string { return fmt.Sprint(r.PeakStateReads) })
	row("  charged / admitted job, writer installation", "", func(r *Result) string { return f2(r.InstallChargedPerJob) })
	row("secondary-limit responses (wait directed, s)", "", func(r *Result) string {
		return fmt.Sprintf("%d (%.0f)", r.Total.Secondary, r.SecondaryWaitS)
	})
	row("max arrival-order displacement", "", func(r *Result) string { return fmt.Sprint(r.MaxDisplacement) })
	row("death -> seat freed, s (each)", "", func(r *Result) string {
		if len(r.Recoveries) == 0 {
			return "-"
		}
		var p []string
		for _, rc := range r.Recoveries {
			p = append(p, secs(rc.FreedAfterS))
		}
		return strings.Join(p, ", ")
	})
	row("death -> seat back in service, s", "", func(r *Result) string {
		if len(r.Recoveries) == 0 {
			return "-"
		}
		var p []string
		for _, rc := range r.Recoveries {
			p = append(p, secs(rc.InServiceAfterS))
		}
		return strings.Join(p, ", ")
	})
	row("idle acquire: installation + App auth + GITHUB_TOKEN", "", func(r *Result) string {
		if r.IdleAdmit == nil {
			return "-"
		}
		return fmt.Sprintf("%g + %g + %g", r.IdleAdmit.Installation, r.IdleAdmit.AppAuth, r.IdleAdmit.WorkflowToken)
	})
	row("waiting job, 1st hour: requests / charged / writes", "", func(r *Result) string {
		if r.Waiter == nil {
			return "-"
		}
		return fmt.Sprintf("%d / %d / %d", r.Waiter.Counts.Requests, r.Waiter.Counts.Charged, r.Waiter.Counts.WriteAttempts)
	})
	row("upgrade drains, min (schema: config change to upgrade)", "", func(r *Result) string {
		if len(r.Upgrades) == 0 {
			return "-"
		}
		var p []string
		for _, u := range r.Upgrades {
			if u.DrainS < 0 {
				p = append(p, fmt.Sprintf("%d: never", u.Schema))
				continue
			}
			p = append(p, fmt.Sprintf("%d: %.1f", u.Schema, u.DrainS/60))
		}
		return strings.Join(p, ", ")
	})
	row("failed jobs", "0", func(r *Result) string { return fmt.Sprint(r.FailedJobs) })
	row("safety violations", "0", func(r *Result) string { return fmt.Sprint(len(r.Violations)) })
	// The targets, in a fixed order.
	var order []Target
	seen := map[string]bool{}
	for _, r := range rs {
		for _, t := range r.Targets {
			if !seen[t.ID] {
				seen[t.ID] = true
				order = append(order, t)
			}
		}
	}
	pass, fail := 0, 0
	for _, want := range order {
		row("TARGET "+want.Name, want.Bar, func(r *Result) string {
			for _, t := range r.Targets {
				if t.ID != want.ID {
					continue
				}
				if t.Pass {
					pass++
					return fmt.Sprintf("%g PASS", t.Value)
				}
				fail++
				return fmt.Sprintf("%g FAIL", t.Value)
			}
			return "-"
		})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "targets: %d PASS, %d FAIL (reported, not asserted); safety invariants are asserted\n", pass, fail)
	return err
}

func secs(v float64) string {
	if v < 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f", v)
}
