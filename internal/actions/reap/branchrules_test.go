package reap_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestBranchRuleRefusalEndsReapFast: a rule on lock-state that refuses the
// reaper's checkpoint write ends the run within two write attempts with
// state-branch-rules in the ::error title and the summary (naming the
// doctor); nothing is written.
func TestBranchRuleRefusalEndsReapFast(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now.Add(-2*time.Hour), now.Add(time.Hour))}
		w.SeedState(s)
		require.NoError(t, w.Em.SetBranchRules(owner, reaptest.LockRepo, "lock-state", []emulator.BranchRule{{Type: "update"}}))
		before := len(w.History())
		w.Em.ResetMetrics()

		code := reap.Main(context.Background(), deps(w, nil), nil)
		assert.Equal(t, lockaction.ExitFailure, code)
		assert.Contains(t, w.Stdout.String(), "::error title=state-branch-rules::")
		assert.Contains(t, w.Stdout.String(), "buildlock doctor")
		assert.Contains(t, w.Summary(), "state-branch-rules")
		assert.LessOrEqual(t, w.Em.Metrics().Routes["PUT /repos/{owner}/{repo}/contents/{path}"].Requests, int64(2), "ended within two write attempts")
		assert.Len(t, w.History(), before, "nothing written")
	})
}
