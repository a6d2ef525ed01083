package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The class of bursts (docs/performance.md §27): issue 23 asks that bursts
// stay under GitHub's write limits "at every seat count", and `make bench`
// names a handful of bursts. A sweep runs the same tail targets over a
// grid of burst sizes, arrival spacings and seat counts, so a change tuned
// on the named bursts shows what it does to the ones beside them.
//
// A cell is written JOBSxSEATS@SPACING[/HOLD][:SHARE]: 80x2@200ms is 80
// jobs 0.2 s apart on 2 seats, each holding its seat 5 s (the default
// hold); 40x4@1s/30s holds 30 s; 20x2@2s:0.25 runs on a lock whose
// apiShare is 0.25, under GitHub's secondary limits times 0.25, as bench
// burst-20-quarter-limits does. Cells run at DefaultLatency under GitHub's
// own secondary limits (times the share), on the config every named
// workload without one uses (runner serialization, no cooldown, and the
// share as apiShare), and are judged like bench burst-40x4: 0
// secondary-limit answers, at most 70 content-creating requests in any 60
// s, a handoff-noticed p95 of at most 10 s (20 s below a share of 1, as
// the quarter's bursts are), and a seat-idle share of at most 5%.

// BurstSpec is one cell of the class sweep: Jobs jobs arriving Spacing
// apart on Seats seats, each holding its seat for Hold, on a lock whose
// apiShare is Share (1 unless the spec names one).
type BurstSpec struct {
	Jobs, Seats   int
	Spacing, Hold time.Duration
	Share         float64
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
	// minClassShare is the smallest share a cell may name: apiShare's own
	// floor.
	minClassShare = lockstate.MinAPIShare
)

// ParseBurstSpec reads one cell, JOBSxSEATS@SPACING[/HOLD][:SHARE], the
// durations in Go's syntax (200ms, 1s, 1m30s), the share a number above 0
// and at most 1. It refuses anything else with an error that names the
// part at fault.
func ParseBurstSpec(s string) (BurstSpec, error) {
	b := BurstSpec{Share: 1}
	fail := func(why string) (BurstSpec, error) {
		return BurstSpec{}, fmt.Errorf("burst spec %q: %s (want JOBSxSEATS@SPACING[/HOLD][:SHARE], e.g. 80x2@200ms, 40x4@1s/30s or 20x2@2s:0.25)", s, why)
	}
	spec, share, hasShare := strings.Cut(strings.TrimSpace(s), ":")
	if hasShare {
		v, err := strconv.ParseFloat(share, 64)
		if err != nil || !(v >= minClassShare && v <= 1) {
			return fail(fmt.Sprintf("share must be a number from %g to 1", minClassShare))
		}
		b.Share = v
	}
	size, timing, ok := strings.Cut(spec, "@")
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
// not the default, the share only when it is below 1.
func (b BurstSpec) String() string {
	s := fmt.Sprintf("%dx%d@%s", b.Jobs, b.Seats, b.Spacing)
	if b.Hold != DefaultClassHold {
		s += "/" + b.Hold.String()
	}
	if b.share() < 1 {
		s += ":" + strconv.FormatFloat(b.Share, 'g', -1, 64)
	}
	return s
}

// share is the cell's apiShare: 1 when it names none.
func (b BurstSpec) share() float64 {
	if b.Share > 0 && b.Share < 1 {
		return b.Share
	}
	return 1
}

// Workload is the cell as a bench workload over seeds consecutive seeds,
// judged like bench burst-40x4 (like burst-20-quarter-limits below a
// share of 1).
func (b BurstSpec) Workload(seeds int) Workload {
	wl := Workload{
		Name: "class-" + b.String(), Seats: b.Seats, Latency: DefaultLatency, Seeds: max(seeds, 1),
		NoticedP95: 10 * time.Second, BudgetBound: true,
		Description: fmt.Sprintf("%d jobs %s apart on %d seats, %s holds, GitHub's secondary limits as they are (class sweep)", b.Jobs, b.Spacing, b.Seats, b.Hold),
		Jobs:        evenlySpaced(b.Jobs, b.Spacing, b.Hold),
	}
	if share := b.share(); share < 1 {
		wl.LimitScale, wl.NoticedP95 = share, 20*time.Second
		wl.Config = shareConfig(b.Seats, share)
		wl.Description = fmt.Sprintf("%d jobs %s apart on %d seats, %s holds, GitHub's secondary limits times %g and the lock's apiShare saying so (class sweep)", b.Jobs, b.Spacing, b.Seats, b.Hold, share)
	}
	return wl
}

// ClassGrid is the sweep `make bench-class` runs, 5 s holds throughout:
// 80 jobs at five arrival spacings (20 down to 1 a second) on 1, 2, 4 and 8
// seats, then 10 jobs at 2, 1 and 0.5 a second on 1 and 2 seats (a small
// queue, where the first handoffs come before the holds are logged), then
// 20 jobs at one every 2 and 4 s on 1, 2 and 4 seats of a lock at a
// quarter of the App (bench burst-20-quarter-limits' share, arriving a
// tenth and a twentieth as fast).
func ClassGrid() []BurstSpec {
	var grid []BurstSpec
	for _, seats := range []int{1, 2, 4, 8} {
		for _, sp := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second} {
			grid = append(grid, BurstSpec{Jobs: 80, Seats: seats, Spacing: sp, Hold: DefaultClassHold, Share: 1})
		}
	}
	for _, seats := range []int{1, 2} {
		for _, sp := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
			grid = append(grid, BurstSpec{Jobs: 10, Seats: seats, Spacing: sp, Hold: DefaultClassHold, Share: 1})
		}
	}
	for _, seats := range []int{1, 2, 4} {
		for _, sp := range []time.Duration{2 * time.Second, 4 * time.Second} {
			grid = append(grid, BurstSpec{Jobs: 20, Seats: seats, Spacing: sp, Hold: DefaultClassHold, Share: 0.25})
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
