//go:build plantedbugs

package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// TestPlantedBugsCleanupBehindHead (R-T1): with the planted
// cleanup-behind-head bug, the scenario of
// TestUpdateAfterAHeadReadNeverFallsBehindIt ends as a no-op with the
// holder left at the branch head, so that test fails. The simulation
// cannot be relied on to reach it: it needs a release within GitHub's
// replica lag of its admission (the simulation's holds are 30 s or more)
// and a race lost between two lagging reads; the e2e acceptance test met it
// about one run in four.
func TestPlantedBugsCleanupBehindHead(t *testing.T) {
	plant.Set(plant.CleanupBehindHead, true)
	defer plant.Set(plant.CleanupBehindHead, false)
	res, left := releaseAfterAHeadReadLosesARace(t)
	assert.False(t, res.Written, "the planted bug decided on the older replica")
	assert.True(t, left, "and left the holder")
}
