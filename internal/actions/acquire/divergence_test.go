package acquire_test

// Tests that pin deliberate divergences of acquire from the JavaScript
// reference (docs/divergences.md). Each test names the reference behaviour
// it departs from.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// afterStatePut runs after once, right after the first state write that
// GitHub acknowledged has returned to the client: a concurrent writer that
// lands immediately after this job's admission.
type afterStatePut struct {
	next  http.RoundTripper
	after func()
	once  sync.Once
}

func (h *afterStatePut) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/"+actiontest.StatePath) && resp.StatusCode < 300 {
		h.once.Do(h.after)
	}
	return resp, err
}

// TestAcknowledgedAdmissionIsNotReReadOrRetracted pins divergence 1
// (reference-behavior.md §3.5 step 10): the reference re-reads the state
// after its admission write and retracts the admission when that read shows
// an account incident. Here an acknowledged compare-and-swap write is the
// proof: its base had no incident (the transition refuses to admit on one),
// so a schema-5 admission costs exactly one state read and one write, and
// an incident that lands right after it does not retract it. Such an
// incident is indistinguishable from one a second later, which the
// reference does not retract either; the incident still blocks every later
// admission. (A lost-response admission is re-read and retracted:
// TestIncidentAfterAnAmbiguousAdmissionRetractsIt.)
func TestAcknowledgedAdmissionIsNotReReadOrRetracted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, schema5Config)
		w.SeedState(schema5())
		j := w.NewJob("build", "runner-1")
		d := j.Deps()
		d.Transport = &afterStatePut{next: d.Transport, after: func() { w.SeedState(withIncident(t, w.State())) }}
		require.NoError(t, runDeps(context.Background(), d))

		out := j.Outputs()
		assert.Equal(t, "true", out["acquired"])
		assert.Equal(t, "acquired", out["admission-result"])
		m := w.Em.Metrics()
		assert.Equal(t, int64(1), m.Paths["GET /repos/acme/build-lock/contents/"+actiontest.StatePath].Requests, "one state read: no verification read after the write")
		assert.Equal(t, int64(1), w.Puts(), "one write: joining the queue and admission")
		s := w.State()
		require.NotNil(t, s.ActiveIncident, "the incident landed right after the admission")
		require.Len(t, s.Holders, 1, "the acknowledged admission is not retracted")
		assert.Equal(t, j.HolderID(), s.Holders[0].HolderID)

		// The incident still blocks the next job, without a write.
		k := w.NewJob("other", "runner-2")
		require.Error(t, run(context.Background(), k))
		assert.Equal(t, "account-blocked", k.Outputs()["admission-result"])
		assert.Equal(t, int64(1), w.Puts())
	})
}

// TestTheLockRepositoryItselfMayAcquire pins divergence 3: a workflow of the
// lock repository itself (GITHUB_REPOSITORY is the lock repository) is an
// ordinary caller of its owner. The reference has no rule for it (its
// consumers are fixed by constants); this port allows it, because it is the
// owner's own repository and the writer token is scoped to that repository
// anyway. Both ways of naming the lock repository work: the action's own
// repository, and a local `uses: ./...` (GITHUB_ACTION_REPOSITORY empty),
// which falls back to the calling repository.
func TestTheLockRepositoryItselfMayAcquire(t *testing.T) {
	for name, actionRepo := range map[string]string{"remote uses": actiontest.Owner + "/" + actiontest.LockRepo, "local uses": ""} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				j.Env["GITHUB_REPOSITORY"] = actiontest.Owner + "/" + actiontest.LockRepo
				j.Env["GITHUB_REPOSITORY_ID"] = strconv.Itoa(actiontest.LockRepoID)
				j.Env["GITHUB_ACTION_REPOSITORY"] = actionRepo
				require.NoError(t, run(context.Background(), j))
				holderID := j.Outputs()["holder-id"]
				assert.True(t, strings.HasPrefix(holderID, "acme/build-lock:"), holderID)
				s := w.State()
				require.Len(t, s.Holders, 1)
				assert.Equal(t, "acme/build-lock", s.Holders[0].Repository)

				j.ResetFiles()
				require.NoError(t, releaseRun(context.Background(), j))
				assert.Equal(t, "released", j.Outputs()["cleanup-result"])
				assert.Empty(t, w.State().Holders)
			})
		})
	}
}

// TestOwnerLoginsCompareCaseInsensitively pins divergence 4: GitHub logins
// and repository names are case-insensitive, so the caller's owner, the
// lock repository input and the writer App installation's account are
// compared without case. The reference compares its constants exactly. The
// owner id is still pinned (TestOwnerIsPinnedByIDNotOnlyByLogin): a login
// in another case with another id is refused.
func TestOwnerLoginsCompareCaseInsensitively(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1").Input("lock-repository", "ACME/Build-Lock")
		j.Env["GITHUB_REPOSITORY"] = "Acme/game"
		require.NoError(t, run(context.Background(), j))
		assert.Equal(t, "true", j.Outputs()["acquired"])
		require.Len(t, w.State().Holders, 1)
		j.ResetFiles()
		require.NoError(t, releaseRun(context.Background(), j))
		assert.Equal(t, "released", j.Outputs()["cleanup-result"])

		k := w.NewJob("build", "runner-1").Input("lock-repository", "ACME/Build-Lock")
		k.Env["GITHUB_REPOSITORY"] = "Acme/game"
		k.Env["GITHUB_REPOSITORY_OWNER_ID"] = "8" // acme is id 7
		err := run(context.Background(), k)
		require.Error(t, err)
		assert.Equal(t, "caller-owner-id", lockaction.ReasonCode(err))
	})
}

// TestJobIDIsResolvedOnTheRunnerTheStepRunsOn pins the exact-job lookup
// divergence (reference-behavior.md §2.5 jobId): the reference keeps the
// jobs whose runner_name equals the runner-id input, and skips the lookup
// without a runner-id. Here the runner is RUNNER_NAME, the runner the step
// really runs on, so the job id is found when runner-id is empty or is a
// value that is not a runner name (a pool label), and the reaper gets exact
// job evidence for the holder.
func TestJobIDIsResolvedOnTheRunnerTheStepRunsOn(t *testing.T) {
	for name, runnerID := range map[string]string{"runner-id empty": "", "runner-id is a pool label": "unity-pool"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input("github-token", actiontest.ConsumerToken).Input("runner-id", runnerID)
				require.NoError(t, run(context.Background(), j))
				s := w.State()
				require.Len(t, s.Holders, 1)
				assert.Equal(t, strconv.FormatInt(j.JobID, 10), s.Holders[0].JobID)
				assert.Equal(t, "runner-1", s.Holders[0].RunnerName)
			})
		})
	}
}

// TestStalledAttemptIsAbandonedAfterTenSeconds: the reference bounds an
// acquire call only by its attempt count and the cancellation signal
// (reference-behavior.md §3.6 "Per-path budgets"), so one request on a
// connection that stalls holds the job until the operating system gives up
// on it. The state-writer client bounds every attempt of an attempt-bounded
// call by ghclient.AttemptTimeout (10 s, after which GitHub itself abandons
// a request) and retries: a stalled state read costs ten seconds, not the
// job.
func TestStalledAttemptIsAbandonedAfterTenSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.Stall, Count: 1})
		j := w.NewJob("build", "runner-1")
		begin := time.Now()
		require.NoError(t, run(context.Background(), j))
		elapsed := time.Since(begin)
		assert.Equal(t, "true", j.Outputs()["acquired"])
		assert.GreaterOrEqual(t, elapsed, ghclient.AttemptTimeout)
		assert.Less(t, elapsed, ghclient.AttemptTimeout+2*time.Second, "one abandoned attempt and one backoff")
	})
}

// TestJobIDComesFromTheJobContextWithoutALookup (divergences I11): given the
// job's id in job-check-run-id (the runner evaluates the input's default,
// ${{ job.check_run_id }}: an Actions job and its check run share one id),
// acquire records it without listing the run attempt's jobs; left empty (GHES
// without the property, nektos/act), it lists them as before.
func TestJobIDComesFromTheJobContextWithoutALookup(t *testing.T) {
	for name, fromContext := range map[string]bool{"from the job context": true, "looked up": false} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1").Input("github-token", actiontest.ConsumerToken)
				if fromContext {
					j.Input("job-check-run-id", strconv.FormatInt(j.JobID, 10))
				}
				w.Em.ResetMetrics()
				require.NoError(t, run(context.Background(), j))
				s := w.State()
				require.Len(t, s.Holders, 1)
				assert.Equal(t, strconv.FormatInt(j.JobID, 10), s.Holders[0].JobID)
				lookups := 0
				for route, c := range w.Em.Metrics().Routes {
					if strings.HasSuffix(route, "/jobs") {
						lookups += int(c.Requests)
					}
				}
				if fromContext {
					assert.Zero(t, lookups, "no job listing")
				} else {
					assert.Equal(t, 1, lookups)
				}
			})
		})
	}
}
