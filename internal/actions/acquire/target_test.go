package acquire_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

func TestStateBranchEqualToTheDefaultBranchIsRefusedBeforeAnyWrite(t *testing.T) {
	for _, branch := range []string{"main", "MAIN"} {
		t.Run(branch, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input("state-branch", branch)
				err := run(context.Background(), j)
				require.Error(t, err)
				assert.Equal(t, "state-branch-is-default", lockaction.ReasonCode(err))
				assert.Equal(t, int64(0), w.Puts(), "nothing is written to the default branch")

				err = release.Run(context.Background(), j.Deps())
				require.Error(t, err)
				assert.Equal(t, "state-branch-is-default", lockaction.ReasonCode(err))
				assert.Equal(t, int64(0), w.Puts())
			})
		})
	}
	t.Run("another branch works and costs one repository read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1").Input("state-branch", "lock-state-2")
			require.NoError(t, run(context.Background(), j))
			assert.Equal(t, int64(1), w.Em.Metrics().Paths["GET /repos/acme/build-lock"].Requests)
		})
	})
}

// TestQualifiedStateBranchIsRefusedBeforeAnyRequest: GitHub resolves
// refs/heads/main as the branch main (and heads/main, tags/x, HEAD, a
// commit id as git does), so a qualified state-branch would reach the
// default branch past the name comparison. Refused before any request.
func TestQualifiedStateBranchIsRefusedBeforeAnyRequest(t *testing.T) {
	for _, branch := range []string{"refs/heads/main", "heads/main", "refs/heads/lock-state", "tags/v1", "HEAD"} {
		t.Run(branch, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input("state-branch", branch)
				err := run(context.Background(), j)
				require.Error(t, err)
				assert.Equal(t, "state-branch-ambiguous", lockaction.ReasonCode(err))
				assert.Equal(t, int64(0), w.Em.Metrics().Requests)
				err = release.Run(context.Background(), j.Deps())
				assert.Equal(t, "state-branch-ambiguous", lockaction.ReasonCode(err))
				assert.Equal(t, int64(0), w.Em.Metrics().Requests)
			})
		})
	}
}

func TestReservedLockNamesAreRefusedBeforeAnyRequest(t *testing.T) {
	for _, name := range []string{"policy", "Policy", "unity.config", "seats.CONFIG", "README"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input("lock-name", name)
				err := run(context.Background(), j)
				require.Error(t, err)
				assert.Equal(t, "lock-name-reserved", lockaction.ReasonCode(err))
				assert.Equal(t, int64(0), w.Em.Metrics().Requests)
				require.Error(t, release.Run(context.Background(), j.Deps()))
				assert.Equal(t, int64(0), w.Em.Metrics().Requests)
			})
		})
	}
}

func TestMissingConfigWarnsAndACaseVariantIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":2}`) // locks/seats.config.json
		j := w.NewJob("build", "runner-1").Input("lock-name", "Seats")
		err := run(context.Background(), j)
		require.Error(t, err)
		assert.Equal(t, "lock-name-case-collision", lockaction.ReasonCode(err))
		assert.Contains(t, err.Error(), "use lock-name: seats")
		assert.Equal(t, int64(0), w.Puts())

		k := w.NewJob("build", "runner-1").Input("lock-name", "fresh")
		require.NoError(t, run(context.Background(), k), "a lock without a config and without a look-alike runs on the defaults")
		assert.Contains(t, k.Out.String(), "::warning::Lock config locks/fresh.config.json does not exist")
		assert.Contains(t, k.Summary(), "is missing: defaults (one seat)")
		assert.NotEmpty(t, w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", "locks/fresh.json"))
	})
}

// TestOwnerIsPinnedByIDNotOnlyByLogin: without locks/policy.json a caller is
// authorized by its owner's login; the writer App's installation then tells
// the lock repository owner's real id, and a same-login, different-id caller
// (a renamed and re-registered organization) is refused before any write.
func TestOwnerIsPinnedByIDNotOnlyByLogin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		j.Env["GITHUB_REPOSITORY_OWNER_ID"] = "8" // the lock repository's owner acme is id 7
		err := run(context.Background(), j)
		require.Error(t, err)
		assert.Equal(t, "caller-owner-id", lockaction.ReasonCode(err))
		assert.Contains(t, err.Error(), "same login, different account")
		assert.Equal(t, int64(0), w.Puts())
		err = release.Run(context.Background(), j.Deps())
		assert.Equal(t, "caller-owner-id", lockaction.ReasonCode(err), "%v", err)
		assert.Equal(t, int64(0), w.Puts())
	})
}
