package release_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestBranchRuleRefusalEndsReleaseFast: a rule on lock-state that refuses
// the release write ends release within two write attempts with
// state-branch-rules in the ::error title and the summary (naming the
// doctor), with or without a confirmed cleanup report; nothing is written.
func TestBranchRuleRefusalEndsReleaseFast(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string
		report map[string]string
	}{
		{"plain", `{"maxHolders":1}`, nil},
		{"confirmed cleanup", lifecycle60, map[string]string{"resource-cleanup-status": "confirmed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, tc.config)
				if tc.config == lifecycle60 {
					seedSchema(w, 4)
				}
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				for k, v := range tc.report {
					j.Input(k, v)
				}
				require.NoError(t, w.Em.SetBranchRules(actiontest.Owner, actiontest.LockRepo, "lock-state", []emulator.BranchRule{{Type: "pull_request"}}))
				versions, puts := w.Versions(), w.Puts()
				err := rel(j)
				require.Error(t, err)
				code := lockaction.Finish(actionio.New(j.Deps().Getenv, j.Out), j.Signals, err)
				assert.Equal(t, lockaction.ExitFailure, code)
				assert.Equal(t, "state-branch-rules", lockaction.ReasonCode(err))
				assert.Contains(t, j.Out.String(), "::error title=state-branch-rules::")
				assert.Contains(t, j.Out.String(), "buildlock doctor")
				assert.Contains(t, j.Summary(), "state-branch-rules")
				assert.LessOrEqual(t, w.Puts()-puts, int64(2), "ended within two write attempts")
				assert.Equal(t, versions, w.Versions(), "nothing written")
				assert.Len(t, w.State().Holders, 1, "the seat is still recorded")
			})
		})
	}
}
