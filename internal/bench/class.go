package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The class of bursts (docs/performance.md §27): issue 23 asks that bursts
// stay under GitHub's write limits "at every seat count", and `make bench`
// names a handful of bursts. A sweep runs the same tail targets over a
// grid of burst sizes, arrival spacings and seat counts, so a change tuned
// on the named bursts shows what it does to the ones beside them.
//
// A cell is written JOBSxSEATS@SPACING[/HOLD]: 80x2@200ms is 80 jobs 0.2 s
// apart on 2 seats, each holding its seat 5 s (the default hold); 40x4@1s/30s
// holds 30 s. Cells run at DefaultLatency under GitHub's own secondary
// limits, on the config every named workload without one uses
// (runner serialization, no cooldown), and are judged like bench
// burst-40x4: 0 secondary-limit answers, at most 70 content-creating
// requests in any 60 s, a handoff-noticed p95 of at most 10 s, and a
// seat-idle share of at most 5%.

// BurstSpec is one cell of the class sweep: Jobs jobs arriving Spacing
// apart on Seats seats, each holding its seat for Hold.
type BurstSpec struct {
	Jobs, Seats   int
	Spacing, Hold time.Duration
}

// DefaultClassHold is a cell's hold when its spec names none: the hold of
// the named tail bursts.
const DefaultClassHold = 5 * time.Second

// Bounds of a cell: a sweep is a measurement, not a load test.
const (
	maxClassJobs    = 1000
	maxClassSeats   = 64
	maxClassSpacing = time.Hour
	maxClassHold    = time.Hour
)

// ParseBurstSpec reads one cell, JOBSxSEATS@SPACING[/HOLD], the durations
// in Go's syntax (200ms, 1s, 1m30s). It refuses anything else with an
// error that names the part at fault.
func ParseBurstSpec(s string) (BurstSpec, error) {
	var b BurstSpec
	fail := func(why string) (BurstSpec, error) {
		return BurstSpec{}, fmt.Errorf("burst spec %q: %s (want JOBSxSEATS@SPACING[/HOLD], e.g. 80x2@200ms or 40x4@1s/30s)", s, why)
	}
	size, timing, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok {
		return fail("no @SPACING")
	}
	jobs, seats, ok := strings.Cut(size, "x")
	if !ok {
		return fail("no JOBSxSEATS")
	}
	var err error
	if b.Jobs, err = strconv.Atoi(jobs); err != nil || b.Jobs < 1 || b.Jobs > maxClassJobs {
		return fail(fmt.Sprintf("jobs must be an integer 1-%d", maxClassJobs))
	}
	if b.Seats, err = strconv.Atoi(seats); err != nil || b.Seats < 1 || b.Seats > maxClassSeats {
		return fail(fmt.Sprintf("seats must be an integer 1-%d", maxClassSeats))
	}
	spacing, hold, hasHold := strings.Cut(timing, "/")
	if b.Spacing, err = time.ParseDuration(spacing); err != nil || b.Spacing < time.Millisecond || b.Spacing > maxClassSpacing {
		return fail("spacing must be a duration from 1ms to 1h")
	}
	b.Hold = DefaultClassHold
	if hasHold {
		if b.Hold, err = time.ParseDuration(hold); err != nil || b.Hold < time.Second || b.Hold > maxClassHold {
			return fail("hold must be a duration from 1s to 1h")
		}
	}
	return b, nil
}

// String is the spec in ParseBurstSpec's syntax, the hold only when it is
// not the default.
func (b BurstSpec) String() string {
	s := fmt.Sprintf("%dx%d@%s", b.Jobs, b.Seats, b.Spacing)
	if b.Hold != DefaultClassHold {
		s += "/" + b.Hold.String()
	}
	return s
}

// Workload is the cell as a bench workload over seeds consecutive seeds,
// judged like bench burst-40x4.
func (b BurstSpec) Workload(seeds int) Workload {
	return Workload{
		Name: "class-" + b.String(), Seats: b.Seats, Latency: DefaultLatency, Seeds: max(seeds, 1),
		NoticedP95: 10 * time.Second, BudgetBound: true,
		Description: fmt.Sprintf("%d jobs %s apart on %d seats, %s holds, GitHub's secondary limits as they are (class sweep)", b.Jobs, b.Spacing, b.Seats, b.Hold),
		Jobs:        evenlySpaced(b.Jobs, b.Spacing, b.Hold),
	}
}

// ClassGrid is the sweep `make bench-class` runs, 5 s holds throughout:
// 80 jobs at five arrival spacings (20 down to 1 a second) on 1, 2, 4 and 8
// seats, then 10 jobs at 2, 1 and 0.5 a second on 1 and 2 seats (a small
// queue, where the first handoffs come before the holds are logged).
func ClassGrid() []BurstSpec {
	var grid []BurstSpec
	for _, seats := range []int{1, 2, 4, 8} {
		for _, sp := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second} {
			grid = append(grid, BurstSpec{Jobs: 80, Seats: seats, Spacing: sp, Hold: DefaultClassHold})
		}
	}
	for _, seats := range []int{1, 2} {
		for _, sp := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
			grid = append(grid, BurstSpec{Jobs: 10, Seats: seats, Spacing: sp, Hold: DefaultClassHold})
		}
	}
	return grid
}

// RenderClass writes one row per cell result: the figures the tail targets
// judge, the arrival-order displacement beside them, and the targets the
// cell failed (their IDs), or PASS.
func RenderClass(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tseeds\tnoticed p95 (s)\tmax (s)\tpeak writes/60 s\tsecondary (wait s)\tpeak points/60 s\tseat-idle\tdisplacement\ttargets")
	for _, r := range results {
		var failed []string
		for _, t := range r.Targets {
			if !t.Pass {
				failed = append(failed, t.ID)
			}
		}
		verdict := "PASS"
		if len(failed) > 0 {
			verdict = "FAIL " + strings.Join(failed, ",")
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%d\t%d (%.0f)\t%d\t%.1f%%\t%d\t%s\n",
			strings.TrimPrefix(r.Name, "class-"), r.Seeds, r.HandoffGap.P95S, r.HandoffGap.MaxS, r.PeakWrites,
			r.Total.Secondary, r.SecondaryWaitS, r.PeakPoints, 100*r.SeatIdleShare, r.MaxDisplacement, verdict)
	}
	return tw.Flush()
}
