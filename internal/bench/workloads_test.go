package bench

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"testing/synctest"
)

// smokeWorkloads run under -race and -short (make test); the rest only in
// `make bench`.
var smokeWorkloads = map[string]bool{"idle": true, "crash": true}

var (
	jsonOut   = flag.Bool("json", false, "TestWorkloads: print the workload results as JSON instead of the table")
	onlyWL    = flag.String("workload", "", "TestWorkloads: run only this workload")
	benchSeed = flag.Uint64("seed", 20261202, "TestWorkloads: seed of arrivals, holds and jitter")
)

// TestWorkloads runs the named workloads of `make bench` in virtual time and
// prints one table (or JSON with -args -json, or BENCH_JSON=1; BENCH_OUT=file
// also writes the JSON to file). Targets are
// reported, not asserted; a safety violation or a failed job fails the test.
func TestWorkloads(t *testing.T) {
	var results []*Result
	for _, wl := range Workloads() {
		if *onlyWL != "" && wl.Name != *onlyWL {
			continue
		}
		if *onlyWL == "" && (raceEnabled || testing.Short()) && !smokeWorkloads[wl.Name] {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			res, err := Run(t, wl, *benchSeed)
			if res != nil {
				results = append(results, res)
			}
			if err != nil {
				t.Errorf("workload %s: %v", wl.Name, err)
			}
		})
	}
	if path := os.Getenv("BENCH_OUT"); path != "" {
		data, err := json.MarshalIndent(struct {
			Workloads []*Result `json:"workloads"`
		}{results}, "", "  ")
		if err == nil {
			err = os.WriteFile(path, append(data, '\n'), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if *jsonOut || os.Getenv("BENCH_JSON") == "1" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Workloads []*Result `json:"workloads"`
		}{results}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := RenderWorkloads(os.Stdout, results); err != nil {
		t.Fatal(err)
	}
}
