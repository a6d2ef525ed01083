package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestQueueStateHasTheRequestedShape(t *testing.T) {
	t.Parallel()
	data, _, err := queueState(10)
	require.NoError(t, err)
	s, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: "bench"})
	require.NoError(t, err)
	assert.Len(t, s.Holders, 2)
	assert.Len(t, s.Queue, 10)
}

func BenchmarkAdmissionWithQueue(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		data, cfg, err := queueState(n)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("queue=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := lockstate.Acquire(s, cfg, lockstate.AcquireRequest{Identity: identity(n + 1), Lease: 1}, benchNow); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "doc-bytes")
		})
	}
}
