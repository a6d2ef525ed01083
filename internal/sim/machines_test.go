package sim_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/sim"
)

// machineSeeds are the seeds TestMachineSeeds forces onto serializeBy
// "machine" (SIM_MACHINE_SEEDS=N runs N seeds from SIM_MACHINE_FIRST,
// default 1, instead). Schemas alternate between 4 (quarantines, no
// fencing) and 6.
var machineSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// TestMachineSeeds (issue 26) runs seeds whose runner agents share one or
// two machines, on a lock serialized by machine: every version keeps one
// seat per machine (checker, history and linearizability rules), and
// across the seeds an agent waits while a sibling holds its machine's seat
// and a sibling agent reclaims its machine's quarantine.
func TestMachineSeeds(t *testing.T) {
	t.Parallel()
	seeds := machineSeeds
	if raceEnabled || testing.Short() {
		seeds = seeds[:2]
	}
	if v, err := strconv.Atoi(os.Getenv("SIM_MACHINE_SEEDS")); err == nil && v > 0 {
		first, _ := strconv.ParseUint(os.Getenv("SIM_MACHINE_FIRST"), 10, 64)
		seeds = nil
		for i := range uint64(v) {
			seeds = append(seeds, max(first, 1)+i)
		}
	}
	totals := map[string]int64{}
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				schema := 4 + 2*int(seed%2)
				rep := runSeed(t, seed, sim.Config{Schema: schema, Machines: 1, Debug: os.Getenv("SIM_DEBUG") != ""})
				if rep.Debug != "" && !rep.OK() {
					t.Log(rep.Debug)
				}
				for k, v := range rep.Faults {
					if strings.HasPrefix(k, "sim:machine") {
						totals[k] += v
					}
				}
				t.Logf("seed %d: %d jobs, %d versions, %d admissions; %s", seed, rep.Jobs, rep.Versions, rep.Admissions, rep.Schedule)
			})
		}
	})
	t.Logf("machine seeds: %d; totals %v", len(seeds), totals)
	assert.Positive(t, totals["sim:machine-seed"])
	if len(seeds) > 2 {
		assert.Positive(t, totals["sim:machine-sibling-waited"], "no agent waited for a sibling's seat")
		assert.Positive(t, totals["sim:machine-sibling-reclaim"], "no sibling agent reclaimed its machine's quarantine")
	}
}
