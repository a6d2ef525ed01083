package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/demo"
)

// demoFlags registers the flags shared by demo and bench.
func demoFlags(fs *flag.FlagSet, o *demo.Options) {
	fs.IntVar(&o.Jobs, "jobs", demo.DefaultJobs, "number of concurrent jobs")
	fs.IntVar(&o.Repositories, "repos", demo.DefaultRepositories, "number of consumer repositories")
	fs.IntVar(&o.Runners, "runners", demo.DefaultRunners, "number of runners (each runs one job at a time)")
	fs.IntVar(&o.MaxHolders, "holders", demo.DefaultMaxHolders, "seats (maxHolders)")
	fs.DurationVar(&o.Poll, "poll", demo.DefaultPoll, "acquire poll interval")
	fs.DurationVar(&o.HoldMin, "hold-min", demo.DefaultHoldMin, "shortest hold time")
	fs.DurationVar(&o.HoldMax, "hold-max", demo.DefaultHoldMax, "longest hold time")
	fs.DurationVar(&o.ArrivalSpread, "arrivals", demo.DefaultArrivalSpread, "spread job arrivals over this window")
	fs.DurationVar(&o.Latency, "latency", 0, "latency the emulator adds to every request")
	fs.IntVar(&o.DeadJobs, "dead", demo.DefaultDeadJobs, "jobs that die while holding a seat")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0 = random)")
	fs.DurationVar(&o.Timeout, "timeout", demo.DefaultTimeout, "abort the run after this long")
	fs.DurationVar(&o.ReapEvery, "reap-every", demo.DefaultReapEvery, "how often the scheduled reaper runs (compressed from 5 minutes)")
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("buildlock demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demo.Options
	demoFlags(fs, &o)
	asJSON := fs.Bool("json", false, "print only the summary, as one JSON object")
	unity := fs.Bool("unity", false, "run the hosted half of the Unity lifecycle instead: runner preflight, change classifier (needs git), validation gate (docs/demo.md)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if *unity {
		return runUnityDemo(ctx, *asJSON, stdout)
	}
	if err := checkDemoFlags(o); err != nil {
		return err
	}
	o.Quiet = *asJSON
	sum, err := demo.Run(ctx, o, stdout)
	if sum != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(sum); err != nil {
				return err
			}
		} else {
			sum.Render(stdout)
		}
	}
	if err != nil {
		return err
	}
	if !sum.OK() {
		return fmt.Errorf("the demo observed %d invariant violation(s), %d failed job(s) and %d seat(s) not returned to service",
			len(sum.Violations), len(sum.FailedJobs), sum.SeatsNotReturned())
	}
	return nil
}

// checkDemoFlags rejects explicit zero or negative sizes, which demo.Options
// would otherwise read as "use the default".
func checkDemoFlags(o demo.Options) error {
	for name, v := range map[string]int{"jobs": o.Jobs, "repos": o.Repositories, "runners": o.Runners, "holders": o.MaxHolders} {
		if v < 1 {
			return fmt.Errorf("--%s must be at least 1", name)
		}
	}
	if o.Poll <= 0 || o.HoldMin < 0 || o.HoldMax < 0 || o.ArrivalSpread < 0 || o.Timeout <= 0 || o.ReapEvery <= 0 {
		return fmt.Errorf("durations must be positive")
	}
	return nil
}
