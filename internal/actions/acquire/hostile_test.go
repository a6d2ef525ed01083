package acquire_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestTwoMatrixLegsCannotShareOneSeat is the hostile tester's case: schema
// 2, maxHolders 1, no github-token, two legs of one run with the default
// holder-id-suffix on two runners. Before the recorded runner identity both
// got acquired=true on one seat.
func TestTwoMatrixLegsCannotShareOneSeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		legA := w.NewJob("unity", "unity-win-01")
		legB := w.SameJobOn(legA, "unity-win-02")
		require.Equal(t, legA.HolderID(), legB.HolderID(), "the default suffix gives both legs one holder id")

		require.NoError(t, run(context.Background(), legA))
		require.Equal(t, "true", legA.Outputs()["acquired"])

		err := run(context.Background(), legB)
		require.Error(t, err)
		assert.Equal(t, lockstate.CodeHolderIDCollision, lockstate.CodeOf(err))
		assert.Contains(t, err.Error(), "holder-id-suffix")
		assert.NotEqual(t, "true", legB.Outputs()["acquired"], "the second leg must not be told it holds a seat")

		// The second leg's always() release must not free the first leg's seat.
		require.NoError(t, release.Run(context.Background(), legB.Deps()))
		assert.Equal(t, "noop", legB.Outputs()["cleanup-result"])
		assert.Contains(t, legB.Out.String(), "recorded on runner")
		s := w.State()
		require.Len(t, s.Holders, 1)
		assert.Equal(t, "unity-win-01", s.Holders[0].RunnerName)

		// The first leg releases its own seat.
		require.NoError(t, release.Run(context.Background(), legA.Deps()))
		assert.Equal(t, "released", legA.Outputs()["cleanup-result"])
		assert.Empty(t, w.State().Holders)
	})
}

// hostileID is a holder id a hostile writer put into the state document: it
// tries to start workflow commands on new lines.
const hostileID = "evil/repo:1:job:x\n::add-mask::hidden\n::error::pwned\r\n::set-output name=acquired::true\n%0A::warning::y"

// injected reports output lines that are workflow commands we did not issue.
func injected(out string) []string {
	var bad []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "::add-mask::hidden"), strings.HasPrefix(line, "::error::pwned"),
			strings.HasPrefix(line, "::set-output"), strings.HasPrefix(line, "::warning::y"):
			bad = append(bad, line)
		}
	}
	return bad
}

func TestHostileStateValuesNeverBecomeWorkflowCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		s := lockstate.Empty(actiontest.Lock)
		s.Holders = []lockstate.Holder{{
			Entry: lockstate.Entry{HolderID: hostileID, Repository: "evil/repo\n::error::repo", Workflow: "w", Job: "job", RunID: "1", RunAttempt: "1",
				RunURL: "https://github.com/evil/repo/actions/runs/1\n::error::url", QueuedAt: "2026-01-01T00:00:00.000Z"},
			AcquiredAt: "2026-01-01T00:00:00.000Z", ExpiresAt: "2026-01-01T04:00:00.000Z",
		}}
		w.SeedState(s)

		j := w.NewJob("build", "runner-1").Input("timeout-minutes", "1")
		require.Error(t, run(context.Background(), j), "the hostile holder keeps the only seat: timeout")
		assert.Equal(t, "timeout", j.Outputs()["admission-result"])
		require.NoError(t, release.Run(context.Background(), j.Deps()))
		post := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"})
		require.NoError(t, runDeps(context.Background(), post))

		out := j.Out.String()
		assert.Empty(t, injected(out), "every print path escapes state values")
		assert.Contains(t, out, "%0A::error::pwned", "the value is shown escaped, not dropped")
	})
}

func TestIdentityInputsAreValidatedBeforeAnyRequest(t *testing.T) {
	cases := map[string]struct {
		input, value, code string
	}{
		"suffix with the file-command delimiter": {"holder-id-suffix", "a_GitHubActionsFileCommandDelimeter_b", "pattern-mismatch"},
		"suffix too long":                        {"holder-id-suffix", strings.Repeat("s", lockaction.MaxHolderIDSuffixBytes+1), "too-long"},
		"suffix with a tab":                      {"holder-id-suffix", "a\tb", "control-character"},
		"suffix with an escape":                  {"holder-id-suffix", "a\x1b[31mb", "control-character"},
		"runner-id with an inner newline":        {"runner-id", "runner\n::error::x", "edge-whitespace-or-newline"},
		"runner-id with a NUL":                   {"runner-id", "run\x00ner", "control-character"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input(tc.input, tc.value)
				err := run(context.Background(), j)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.input)
				assert.Equal(t, int64(0), w.Em.Metrics().Requests, "refused before any request")
				assertNotAcquired(t, j, "")
				assert.Empty(t, j.Outputs()["holder-id"], "an untrusted holder id is not written")

				require.Error(t, release.Run(context.Background(), j.Deps()), "release refuses the same input")
				assert.Equal(t, int64(0), w.Em.Metrics().Requests)
			})
		})
	}
	t.Run("RUNNER_NAME that is not the runner's", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			j.Env["RUNNER_NAME"] = "runner-1\n::error::x"
			err := run(context.Background(), j)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "runner-environment")
			assert.Equal(t, int64(0), w.Em.Metrics().Requests)
		})
	})
}
