package bench

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smokeWorkloads run under -race and -short (make test); the rest only in
// `make bench`.
var smokeWorkloads = map[string]bool{"idle": true, "crash": true}

var (
	jsonOut    = flag.Bool("json", false, "TestWorkloads: print the workload results as JSON instead of the table")
	onlyWL     = flag.String("workload", "", "TestWorkloads: run only this workload")
	benchSeed  = flag.Uint64("seed", 20261202, "TestWorkloads: seed of arrivals, holds and jitter")
	burstCells = flag.String("burst", "", "TestWorkloads: run these class-sweep cells instead of the named workloads, comma-separated JOBSxSEATS@SPACING[/HOLD] (class.go)")
	classGrid  = flag.Bool("class", false, "TestWorkloads: run the class sweep's grid (ClassGrid) instead of the named workloads")
	cellSeeds  = flag.Int("cell-seeds", 4, "TestWorkloads: seeds per class-sweep cell")
	breakdown  = flag.Bool("breakdown", false, "TestWorkloads: after the class-sweep rows, print where each cell's state writes and secondary-limit answers went (attempts.go)")
)

// classWorkloads are the cells -burst and -class ask for (nil for neither).
func classWorkloads(t *testing.T) []Workload {
	var specs []BurstSpec
	if *classGrid {
		specs = ClassGrid()
	}
	for _, cell := range strings.Split(*burstCells, ",") {
		if strings.TrimSpace(cell) == "" {
			continue
		}
		b, err := ParseBurstSpec(cell)
		require.NoError(t, err)
		specs = append(specs, b)
	}
	var wls []Workload
	for _, b := range specs {
		wls = append(wls, b.Workload(*cellSeeds))
	}
	return wls
}

// TestWorkloads runs the named workloads of `make bench` in virtual time and
// prints one table (or JSON with -args -json, or BENCH_JSON=1; BENCH_OUT=file
// also writes the JSON to file). Targets are
// reported, not asserted; a safety violation or a failed job fails the test.
func TestWorkloads(t *testing.T) {
	var results []*Result
	cells := classWorkloads(t)
	wls := Workloads()
	if len(cells) > 0 {
		wls = cells
	}
	for _, wl := range wls {
		if *onlyWL != "" && wl.Name != *onlyWL {
			continue
		}
		if len(cells) == 0 && *onlyWL == "" && (raceEnabled || testing.Short()) && !smokeWorkloads[wl.Name] {
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
	if len(cells) > 0 {
		require.NoError(t, RenderClass(os.Stdout, results))
		if *breakdown {
			require.NoError(t, RenderAttempts(os.Stdout, results))
		}
		return
	}
	require.NoError(t, RenderWorkloads(os.Stdout, results))
}
