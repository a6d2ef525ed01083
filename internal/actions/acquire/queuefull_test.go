package acquire_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestFullQueueIsRefusedBeforeAnyWrite: a queue at lockstate.MaxQueueEntries
// refuses one more join with the stable queue-full code (lockaction.Finish
// puts it in the ::error title), an actionable message, and no write.
func TestFullQueueIsRefusedBeforeAnyWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		s := emptyState()
		now := lockstate.FormatTime(time.Now())
		for i := range lockstate.MaxQueueEntries + 1 {
			run := fmt.Sprint(500000 + i)
			e := lockstate.Entry{HolderID: "acme/other:" + run + ":build:default", Repository: "acme/other", Workflow: "ci", Job: "build",
				RunID: run, RunAttempt: "1", RunURL: actiontest.ServerURL + "/acme/other/actions/runs/" + run, QueuedAt: now}
			if i == 0 {
				s.Holders = []lockstate.Holder{{Entry: e, AcquiredAt: now, ExpiresAt: lockstate.FormatTime(time.Now().Add(time.Hour))}}
				continue
			}
			s.Queue = append(s.Queue, e)
		}
		w.SeedState(s)
		versions := w.Versions()

		j := w.NewJob("build", "runner-1")
		err := run(context.Background(), j)
		require.Error(t, err)
		assert.Equal(t, lockstate.CodeQueueFull, lockstate.CodeOf(err))
		assert.Contains(t, err.Error(), "1000 entries")
		assert.Contains(t, err.Error(), "docs/performance.md")
		assert.Equal(t, versions, w.Versions(), "nothing written")
		assert.Zero(t, w.Puts())
	})
}
