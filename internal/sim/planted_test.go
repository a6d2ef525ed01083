//go:build plantedbugs

package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/sim"
	"github.com/stretchr/testify/assert"
)

// plantedCases names, per planted bug, the invariant that must catch it
// and the config that gives the bug a chance to matter.
var plantedCases = []struct {
	bug  plant.Bug
	want string
	cfg  sim.Config
}{
	{plant.FreeSlotOffByOne, "exceed maxHolders", sim.Config{}},
	{plant.SkipAmbiguousReconcile, "no committed version names it", sim.Config{}},
	{plant.QuarantineOnTimeAlone, "time alone is no proof", sim.Config{Aging: 1, Schema: 5}},
	{plant.DropAttemptFence, "run-attempt fence", sim.Config{Schema: 4}},
	{plant.TrustStaleRead, "no committed version names it", sim.Config{}},
}

// TestPlantedBugs (R-T1): each planted bug must be caught within 100 seeds
// by the invariant that names it. Run with -tags plantedbugs; production
// builds cannot enable any of them.
func TestPlantedBugs(t *testing.T) {
	for _, tc := range plantedCases {
		t.Run(tc.bug.String(), func(t *testing.T) {
			plant.Set(tc.bug, true)
			defer plant.Set(tc.bug, false)
			for seed := uint64(1); seed <= 100; seed++ {
				var rep sim.Report
				synctest.Test(t, func(t *testing.T) { rep = sim.Run(t, seed, tc.cfg) })
				for _, v := range rep.Violations {
					if strings.Contains(v, tc.want) {
						t.Logf("planted bug %s caught by seed %d: %s", tc.bug, seed, v)
						fmt.Printf("planted bug %-32s caught by seed %d (invariant %q)\n", tc.bug, seed, tc.want)
						return
					}
				}
			}
			assert.Fail(t, fmt.Sprintf("planted bug %s was not caught within 100 seeds", tc.bug))
		})
	}
}
