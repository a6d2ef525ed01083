package acquire_test

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestBranchRuleRefusalEndsAcquireFast: a rule on lock-state that refuses
// the writer App's writes ends acquire within two write attempts with
// state-branch-rules in the ::error title and the summary, naming the
// doctor, where a conflict would have retried until too-many-conflicts. It
// releases nothing it does not hold: the other job's seat and queue entry
// are untouched.
func TestBranchRuleRefusalEndsAcquireFast(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []emulator.BranchRule
		fault bool
	}{
		{"ruleset", []emulator.BranchRule{{Type: "update"}}, false},
		{"classic protection", []emulator.BranchRule{{Type: emulator.RuleProtectedBranch}}, false},
		{"ruleset_violation fault", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				other := w.NewJob("other", "runner-9")
				s := emptyState()
				now := time.Now()
				s.Holders = []lockstate.Holder{{Entry: lockstate.Entry{HolderID: other.HolderID(), Repository: actiontest.Owner + "/" + actiontest.Consumer,
					Workflow: "Unity", Job: "other", RunID: itoa64(other.RunID), RunAttempt: "1",
					RunURL:   actiontest.ServerURL + "/" + actiontest.Owner + "/" + actiontest.Consumer + "/actions/runs/" + itoa64(other.RunID),
					QueuedAt: lockstate.FormatTime(now)}, AcquiredAt: lockstate.FormatTime(now), ExpiresAt: lockstate.FormatTime(now.Add(time.Hour))}}
				w.SeedState(s)
				before := w.State()
				versions := w.Versions()
				if tc.fault {
					w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.RulesetViolation})
				} else {
					require.NoError(t, w.Em.SetBranchRules(actiontest.Owner, actiontest.LockRepo, "lock-state", tc.rules))
				}

				j := w.NewJob("build", "runner-1")
				err := run(context.Background(), j)
				require.Error(t, err)
				code := lockaction.Finish(actionio.New(j.Deps().Getenv, j.Out), j.Signals, err)
				assert.Equal(t, lockaction.ExitFailure, code)
				assert.Equal(t, "state-branch-rules", lockaction.ReasonCode(err))
				assert.Contains(t, j.Out.String(), "::error title=state-branch-rules::")
				assert.Contains(t, j.Out.String(), "buildlock doctor")
				assert.Contains(t, j.Summary(), "state-branch-rules")
				assert.LessOrEqual(t, w.Puts(), int64(2), "ended within two write attempts")
				assert.Equal(t, versions, w.Versions(), "nothing written")
				assert.Equal(t, before, w.State(), "the other job's seat is untouched")
				assert.NotContains(t, j.Out.String(), "too many", "not reported as contention")
			})
		})
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
