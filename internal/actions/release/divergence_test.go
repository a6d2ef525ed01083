package release_test

// Tests that pin deliberate divergences of release from the JavaScript
// reference (docs/divergences.md).

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
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

// racer is a transport that lets another writer win the compare-and-swap
// race against the first n writes of the state file: before forwarding
// each, it commits a newer version (the same state, updatedAt one second
// later), so GitHub answers 409 "does not match".
type racer struct {
	w    *actiontest.World
	next http.RoundTripper
	n    int
	won  int
}

func (r *racer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/contents/"+actiontest.StatePath) && r.won < r.n {
		r.won++
		s := r.w.State()
		at, _ := lockstate.ParseTime(s.UpdatedAt)
		s.UpdatedAt = lockstate.FormatTime(at.Add(time.Duration(r.won) * time.Second))
		r.w.SeedState(s)
	}
	return r.next.RoundTrip(req)
}

// TestReleaseRetriesItsWriteUntilItsDeadline: a release that loses its
// compare-and-swap race fifteen times in a row (a burst of joins and
// admissions) still releases inside its retry deadline; the reference
// gives up after 10 rounds and leaves the seat held until the reaper
// quarantines it. With release-retry-deadline-seconds 0 (the reference's
// attempt-bounded budget) the 10 rounds stay.
func TestReleaseRetriesItsWriteUntilItsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline string
		released bool
		puts     int64
	}{
		{"with a deadline", "", true, 16},
		{"attempt-bounded", "0", false, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				if tc.deadline != "" {
					j.Input("release-retry-deadline-seconds", tc.deadline)
				}
				w.Em.ResetMetrics()
				d := j.Deps()
				d.Transport = &racer{w: w, next: d.Transport, n: 15}
				begin := time.Now()
				err := release.Run(context.Background(), d)
				assert.Equal(t, tc.puts, w.Puts(), "state writes sent")
				if !tc.released {
					require.ErrorContains(t, err, "10 rounds")
					assert.Len(t, w.State().Holders, 1, "the seat stays held")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "released", j.Outputs()["cleanup-result"])
				assert.Empty(t, w.State().Holders)
				assert.Less(t, time.Since(begin), 2*time.Minute, "inside release-retry-deadline-seconds (120)")
			})
		})
	}
}

// lateWrite is a transport that lands a saved state (the admission of an
// acquire step that died with its write in flight) right after the
// release's first read of the state file at the branch head's commit.
type lateWrite struct {
	w     *actiontest.World
	next  http.RoundTripper
	state *lockstate.State
	done  bool
}

func (l *lateWrite) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if !l.done && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/contents/"+actiontest.StatePath) && len(req.URL.Query().Get("ref")) == 40 {
		l.done = true
		l.w.SeedState(l.state)
	}
	return resp, err
}

// TestReleaseWaitsForTheAcquireWriteInFlight: the acquire step died with
// its admission write in flight (its pending-write marker is left); the
// release finds nothing, confirms it at the branch head, and the
// admission lands just after. The release waits out the in-flight window,
// reads the head again, finds the seat and releases it, instead of ending
// noop with a seat held until the reaper. Without a marker nothing waits.
func TestReleaseWaitsForTheAcquireWriteInFlight(t *testing.T) {
	for _, marker := range []bool{true, false} {
		t.Run(map[bool]string{true: "marker left", false: "no marker"}[marker], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				held := w.State()
				require.Len(t, held.Holders, 1)
				empty := held.Clone()
				empty.Holders = nil
				w.SeedState(empty)
				rt := j.Env["RUNNER_TEMP"]
				require.NoError(t, os.RemoveAll(filepath.Join(rt, "ambiguous-build-lock")), "the step died before recording its admission")
				if marker {
					require.NoError(t, lockaction.WritePendingMarker(rt, lockaction.Target{Owner: actiontest.Owner, Repo: actiontest.LockRepo, Lock: actiontest.Lock}, j.HolderID(), time.Now()))
				}
				d := j.Deps()
				d.Transport = &lateWrite{w: w, next: d.Transport, state: held}
				begin := time.Now()
				require.NoError(t, release.Run(context.Background(), d))
				if !marker {
					assert.Equal(t, "noop", j.Outputs()["cleanup-result"])
					assert.Len(t, w.State().Holders, 1, "without the marker the late admission stays for the reaper")
					return
				}
				assert.Equal(t, "released", j.Outputs()["cleanup-result"])
				assert.Empty(t, w.State().Holders)
				assert.GreaterOrEqual(t, time.Since(begin), lockaction.InFlightWindow-time.Second, "waited out the in-flight window")
			})
		})
	}
}
