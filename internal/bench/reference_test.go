package bench

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMixedFleetHandsSeatsToReferenceWaiters runs one seed of the mixed-fleet
// workload: reference clients and ours share the lock at schema 3, every job
// is admitted and released with no safety violation, and the handoff is
// reported per client (a reference waiter notices at its own 15-20 s poll).
func TestMixedFleetHandsSeatsToReferenceWaiters(t *testing.T) {
	var wl Workload
	for _, w := range Workloads() {
		if w.Name == "handoff-mixed" {
			wl = w
		}
	}
	require.True(t, wl.Mixed, "the handoff-mixed workload exists")
	synctest.Test(t, func(t *testing.T) {
		res, err := Run(t, wl, 20261202)
		require.NoError(t, err)
		assert.Empty(t, res.Violations)
		assert.Equal(t, 0, res.FailedJobs)
		assert.Equal(t, 10, res.Admitted)
		require.NotNil(t, res.HandoffRef)
		require.NotNil(t, res.HandoffOurs)
		assert.Positive(t, res.HandoffRef.N)
		assert.Positive(t, res.HandoffOurs.N)
		assert.Equal(t, res.HandoffGap.N, res.HandoffRef.N+res.HandoffOurs.N)
		assert.Equal(t, 3, res.Schema)
	})
}
