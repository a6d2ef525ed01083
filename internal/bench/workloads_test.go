package bench

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		var seeds []*Result
		for k := range max(wl.Seeds, 1) {
			synctest.Test(t, func(t *testing.T) {
				res, err := Run(t, wl, *benchSeed+uint64(k))
				if res != nil {
					seeds = append(seeds, res)
				}
				assert.NoError(t, err, "workload %s seed %d", wl.Name, *benchSeed+uint64(k))
			})
		}
		if len(seeds) == 1 {
			results = append(results, seeds[0])
		} else if m := Merge(wl, seeds); m != nil {
			results = append(results, m)
		}
	}
	if path := os.Getenv("BENCH_OUT"); path != "" {
		data, err := json.MarshalIndent(struct {
			Workloads []*Result `json:"workloads"`
		}{results}, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
	}
	if *jsonOut || os.Getenv("BENCH_JSON") == "1" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		require.NoError(t, enc.Encode(struct {
			Workloads []*Result `json:"workloads"`
		}{results}))
		return
	}
	require.NoError(t, RenderWorkloads(os.Stdout, results))
}
