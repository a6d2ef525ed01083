package crashtest

import (
	"context"
	"fmt"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runBounded runs fn in the bubble and fails if it has not returned after
// limit of virtual time; it then unblocks fn with release.
func runBounded(t *testing.T, limit time.Duration, release func(), fn func() error) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		assert.Fail(t, fmt.Sprintf("did not return within %s of virtual time", limit))
		release()
		return time.Since(start), <-done
	}
}

// TestRegressionStalledAttemptBoundedCallEnds (crash enumeration
// acquire/b00-r00-before-send/stall and recover-*/…/stall): an
// attempt-bounded GitHub call (ghclient.Budget{} — acquire's wait loop,
// operator recovery) had no per-attempt deadline, so one stalled connection
// hung the action until the runner's job timeout (R-F5). Every attempt is
// now bounded in flight and retried.
func TestRegressionStalledAttemptBoundedCallEnds(t *testing.T) {
	t.Run("acquire", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, cfgTwoSeats)
			v := w.job("victim", "runner-v")
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.json", Kind: emulator.Stall, Count: 1})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			took, err := runBounded(t, budgetAcquire+time.Second, cancel, func() error { return acquire.Run(ctx, deps(v, nil)) })
			require.False(t, err != nil || v.Outputs()["acquired"] != "true", "acquire after one stalled read: %v %v", err, v.Outputs())
			t.Logf("admitted after %s", took)
		})
	})
	t.Run("recover-quarantine", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, cfgThreeSeats)
			qid, _ := seedRecovery(context.Background(), t, w)
			w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.Stall, Count: 1})
			env := w.opEnv("operation", recovery.OperationRecover, "reservation-id", qid, "resource-safe", "true")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			took, err := runBounded(t, 2*time.Minute, cancel, func() error {
				return recoveraction.Run(ctx, w.opDeps(env, &actiontest.SyncBuffer{}, nil))
			})
			require.NoError(t, err, "recover after one stalled write")
			for _, r := range w.State().Reservations {
				require.False(t, r.ReservationID == qid && r.State == lockstate.ReservationQuarantine, "quarantine %s is still active", qid)
			}
			t.Logf("recovered after %s", took)
		})
	})
}

// TestRegressionAcquireTimeoutBoundsInFlightCalls (crash enumeration
// acquire/b01-r00-after-response/stall/c1): acquire checked timeout-minutes
// only between loop iterations and its calls are attempt-bounded, not
// deadline-bound. Under a network partition starting right after the
// installation lookup, each read nests 3 credential attempts inside each
// of 5 attempts, each bounded in flight by 10 s (~165 s per read; the
// config read then falls back to defaults and the state read starts over):
// the acquire ran ~5.5 min with timeout-minutes 2. The setup and the wait
// loop now run on a context that ends at timeout-minutes, and the acquire
// reports a timeout and cleans up on the caller's context.
func TestRegressionAcquireTimeoutBoundsInFlightCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, cfgTwoSeats)
		v := w.job("victim", "runner-v").Input("timeout-minutes", "2")
		tr := newCut(w.Em.Transport(), &cutPlan{Req: 0, Phase: phaseAfter, Label: "GET /repos/acme/build-lock/installation", Fault: faultStall}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		limit := 2*time.Minute + 30*time.Second + time.Second
		took, err := runBounded(t, limit, func() { tr.kill(); cancel() }, func() error { return acquire.Run(ctx, deps(v, tr)) })
		require.False(t, err == nil || v.Outputs()["admission-result"] != "timeout" || v.Outputs()["acquired"] != "false", "want a timeout, got %v with outputs %v", err, v.Outputs())
		t.Logf("acquire with timeout-minutes 2 timed out after %s under a partition", took)
	})
}
