package release_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestReleaseUnderGitHubsContentCreationLimit: GitHub refuses the release
// write with its content-creation secondary limit. The refused write is not
// replayed blind: the release waits out retry-after (nothing is sent on the
// token inside it), re-reads and writes again inside its deadline. When the
// wait ends past the deadline, the release waits it out when it ends within
// release.SecondaryOverrun of the deadline (divergences R12); a longer one
// ends a confirmed cleanup with lock-release-unreachable inside its
// deadline, having sent nothing more.
func TestReleaseUnderGitHubsContentCreationLimit(t *testing.T) {
	t.Run("a wait inside the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			hold(t, j)
			w.Em.AddFault(emulator.Fault{Method: "PUT", PathPattern: "/repos/acme/build-lock/contents/", Kind: emulator.ContentCreationLimit403, RetryAfter: "20", Count: 1})
			w.Em.ResetMetrics()
			begin := time.Now()
			require.NoError(t, rel(j))
			assert.GreaterOrEqual(t, time.Since(begin), 20*time.Second, "retry-after is honored")
			assert.Equal(t, "released", j.Outputs()["cleanup-result"])
			assert.Empty(t, w.State().Holders)
			assert.Equal(t, int64(2), w.Puts(), "the refused write, then one write after the wait")
			for _, r := range w.Em.Metrics().Log {
				if !r.Time.After(begin) || r.Status == 403 {
					continue
				}
				assert.False(t, r.Time.Before(begin.Add(20*time.Second)), "%s %s sent inside the wait", r.Method, r.Path)
			}
		})
	})
	t.Run("a wait that ends past the deadline is waited out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			hold(t, j)
			w.Em.AddFault(emulator.Fault{Method: "PUT", PathPattern: "/repos/acme/build-lock/contents/", Kind: emulator.ContentCreationLimit403, RetryAfter: "150", Count: 1})
			j.Input("resource-cleanup-status", "confirmed")
			w.Em.ResetMetrics()
			begin := time.Now()
			require.NoError(t, rel(j))
			assert.GreaterOrEqual(t, time.Since(begin), 150*time.Second, "retry-after is honored")
			assert.Equal(t, "released", j.Outputs()["cleanup-result"])
			assert.Empty(t, w.State().Holders, "the seat is free, not left to the reaper")
			assert.Equal(t, int64(2), w.Puts(), "the refused write, then one write after the wait")
			assert.Contains(t, j.Out.String(), "its release-retry-deadline-seconds ran out; trying again after the wait")
		})
	})
	t.Run("a wait past the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			hold(t, j)
			w.Em.AddFault(emulator.Fault{Method: "PUT", PathPattern: "/repos/acme/build-lock/contents/", Kind: emulator.ContentCreationLimit403, RetryAfter: "3600"})
			require.Greater(t, time.Hour, 2*time.Minute+release.SecondaryOverrun)
			j.Input("resource-cleanup-status", "confirmed")
			w.Em.ResetMetrics()
			begin := time.Now()
			err := rel(j)
			require.Error(t, err)
			assert.Less(t, time.Since(begin), 2*time.Minute+15*time.Second, "within release-retry-deadline-seconds")
			assert.Equal(t, string(lockstate.ResultLockReleaseUnreachable), j.Outputs()["cleanup-result"])
			assert.Equal(t, int64(1), w.Puts(), "nothing is sent after the refusal")
			assert.Len(t, w.State().Holders, 1, "the seat stays recorded for the reaper")
		})
	})
}
