package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/bench"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/demo"
)

// benchRow is one measured run of a workload.
type benchRow struct {
	Workload string        `json:"workload"`
	Seed     uint64        `json:"seed"`
	Summary  *demo.Summary `json:"summary"`
}

// runBench runs the demo workload with fixed seeds and prints counts and
// ratios (API requests per admitted job, the 304 share, handoff gaps in poll
// intervals), never wall-clock assertions.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("buildlock bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demo.Options
	demoFlags(fs, &o)
	runs := fs.Int("runs", 3, "number of seeded runs")
	scale := fs.Bool("scale", true, "also measure decode+transition+encode cost with 100, 1,000 and 5,000 queued entries")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if err := checkDemoFlags(o); err != nil {
		return err
	}
	o.Quiet = true
	base := o.Seed
	if base == 0 {
		base = 20261202
	}
	var rows []benchRow
	for i := range *runs {
		run := o
		run.Seed = base + uint64(i)
		sum, err := demo.Run(ctx, run, io.Discard)
		if err != nil {
			return fmt.Errorf("seed %d: %w", run.Seed, err)
		}
		if !sum.OK() {
			return fmt.Errorf("seed %d: invariant violations: %v", run.Seed, sum.Violations)
		}
		rows = append(rows, benchRow{Workload: "demo", Seed: run.Seed, Summary: sum})
	}
	var scaleRows []bench.ScaleRow
	if *scale {
		var err error
		if scaleRows, err = bench.Scale([]int{100, 1000, 5000}); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Workloads []benchRow       `json:"workloads"`
			Scale     []bench.ScaleRow `json:"scale,omitempty"`
		}{rows, scaleRows})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tseed\tadmitted\treq/adm\tcharged/adm\t304 share\twrites/adm\tconflicts/adm\thandoff p50 (polls)\thandoff p95 (polls)\tnoticed p50 (polls)\tnoticed p95 (polls)\tutilization\tviolations\t")
	for _, r := range rows {
		s := r.Summary
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.0f%%\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f%%\t%d\t\n",
			r.Workload, r.Seed, s.AdmittedJobs, s.API.RequestsPerAdmission, s.API.ChargedPerAdmission,
			s.API.NotModifiedShare*100, s.API.WritesPerAdmission, s.API.ConflictsPerAdmission,
			s.HandoffGapPolls.Median, s.HandoffGapPolls.P95, s.HandoffNoticedPolls.Median, s.HandoffNoticedPolls.P95,
			s.SeatUtilizationWhileWaiting*100, len(s.Violations))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(scaleRows) > 0 {
		fmt.Fprintln(stdout)
		tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "queued entries	document bytes	waiting poll (µs/op)	admission (µs/op)	allocs/admission	admission cost vs 100	")
		for _, r := range scaleRows {
			fmt.Fprintf(tw, "%d	%d	%.0f	%.0f	%d	%.1fx	\n", r.Queue, r.DocumentBytes, float64(r.PollNsPerOp)/1e3,
				float64(r.AdmitNsPerOp)/1e3, r.AdmitAllocsPerOp, r.GrowthVsFirst)
		}
		return tw.Flush()
	}
	return nil
}
