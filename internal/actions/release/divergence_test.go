package release_test

// Tests that pin deliberate divergences of release from the JavaScript
// reference (docs/divergences.md).

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// TestAttemptBoundedReleaseHasAWindow: release-retry-deadline-seconds=0
// restores the attempt-bounded budget (reference-behavior.md §3.8 step 2),
// which in the reference bounds each call to five attempts but not the
// release as a whole: each honored 60 s Retry-After adds up to four minutes
// per call, across the branch check, the config read and every
// compare-and-swap round. Here the whole attempt-bounded release also runs
// inside a fixed window of five minutes, so a rate-limited GitHub cannot
// hold the step far past it. Every lock-repository read below answers a
// secondary rate limit with Retry-After 60: without the window the branch
// check, the config read and the state read take four to five minutes each
// (fourteen in all) before the release fails.
func TestAttemptBoundedReleaseHasAWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("release-retry-deadline-seconds", "0")
		for _, p := range []string{"/repos/acme/build-lock/git/ref/", "/repos/acme/build-lock/contents/"} {
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: p, Kind: emulator.SecondaryRateLimit403, RetryAfter: "60"})
		}
		begin := time.Now()
		err := rel(j)
		elapsed := time.Since(begin)
		require.Error(t, err, "the state stayed unreachable")
		assert.GreaterOrEqual(t, elapsed, 4*time.Minute, "the five-attempt budget of the branch check is spent in full (four honored 60 s waits)")
		assert.LessOrEqual(t, elapsed, 5*time.Minute+time.Second, "the attempt-bounded window ends the release")
		assert.Len(t, w.State().Holders, 1, "nothing was written")
	})
}
