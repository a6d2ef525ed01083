package reap_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// TestReapChecksTheLockRepositoryByID: the reaper runs only in the lock
// repository, checked by name from the inputs and then by id from GitHub;
// a run whose GITHUB_REPOSITORY_ID is another repository's (the lock
// repository renamed and its name re-used) writes nothing. So do the
// operator recoveries through the same action.
func TestReapChecksTheLockRepositoryByID(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"reap", "recover"} {
		t.Run(op, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := reaptest.New(t, cfgLifecycle)
				w.SeedState(state(4))
				w.Env["GITHUB_REPOSITORY_ID"] = "999"
				w.Env["INPUT_OPERATION"] = op
				w.Env["INPUT_RESERVATION_ID"] = "q-1"
				w.Env["INPUT_RESOURCE_SAFE"] = "true"
				err := reap.Run(context.Background(), deps(w, nil))
				require.Error(t, err)
				assert.Equal(t, recovery.RuleLockRepositoryOnly, lockaction.ReasonCode(err))
				assert.Contains(t, err.Error(), "GITHUB_REPOSITORY_ID is 999")
				assert.Len(t, w.Messages(), 1, "nothing written after the seed")
			})
		})
	}
}
