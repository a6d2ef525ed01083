package acquire_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const statePathPattern = "/repos/acme/build-lock/contents/locks/seats.json"

// TestLostAdmissionResponseThenUnreadableReadIsDecidedByTheNextRead is the
// hostile tester's case: the admission PUT lands but its response is lost,
// the client's retry of the same CAS write gets 409, and the re-read that
// should decide fails. Before, acquire exited 1 with no outputs while its
// holder stayed in the state until the reaper.
func TestLostAdmissionResponseThenUnreadableReadIsDecidedByTheNextRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		// The initial read passes; the store's re-read after the ambiguous
		// write exhausts its attempts on 502s; later reads work.
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1, Count: 5})
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		out := j.Outputs()
		assert.Equal(t, "true", out["acquired"], "the job's own admission is in the state: it is acquired")
		assert.Equal(t, "acquired", out["admission-result"])
		s := w.State()
		require.Len(t, s.Holders, 1)
		assert.Equal(t, j.HolderID(), s.Holders[0].HolderID)
		assert.Len(t, w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath), 2, "seed + one admission, never a second write")
	})
}

// TestLostAdmissionResponseWithAnUnreadableStateReportsUnknown: when no read
// succeeds inside the deadline, acquire cannot know whether it holds the
// seat. It reports acquired=false with admission-result=admission-unknown
// and the holder id, so no licensed step runs and the always() release
// removes the holder if the write landed.
func TestLostAdmissionResponseWithAnUnreadableStateReportsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1})
		j := w.NewJob("build", "runner-1").Input("timeout-minutes", "10")
		err := run(context.Background(), j)
		require.Error(t, err)
		out := j.Outputs()
		assert.Equal(t, "false", out["acquired"])
		assert.Equal(t, "admission-unknown", out["admission-result"])
		assert.Equal(t, j.HolderID(), out["holder-id"])
		require.Len(t, w.State().Holders, 1, "the write landed")

		w.Em.ClearFaults()
		j.ResetFiles()
		require.NoError(t, releaseRun(context.Background(), j))
		assert.Equal(t, "true", j.Outputs()["released"], "the consumer's always() release cleans it up")
		assert.Empty(t, w.State().Holders)
	})
}

// TestReleaseAfterAStaleReadStillReleases is the hostile tester's stale
// read: right after the admission, one lagging replica serves the state as
// it was before it. Release used to print "Nothing to release", exit 0 with
// released=false and leave the holder for the reaper.
func TestReleaseAfterAStaleReadStillReleases(t *testing.T) {
	for _, step := range []string{"release", "post"} {
		t.Run(step, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				w.SeedState(emptyState())
				j := w.NewJob("build", "runner-1")
				require.NoError(t, run(context.Background(), j))
				require.Len(t, w.State().Holders, 1)
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, Count: 1})
				j.ResetFiles()
				if step == "release" {
					require.NoError(t, releaseRun(context.Background(), j))
					assert.Equal(t, "true", j.Outputs()["released"])
				} else {
					post := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"})
					require.NoError(t, runDeps(context.Background(), post))
				}
				assert.Empty(t, w.State().Holders, "the seat is free again")
				assert.Contains(t, j.Out.String(), "stale")
			})
		})
	}
	t.Run("another job releasing the holder id after a stale read still releases", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.SeedState(emptyState())
			j := w.NewJob("build", "runner-1")
			require.NoError(t, run(context.Background(), j))
			held := w.State().Holders
			require.Len(t, held, 1)
			// The hosted fallback release of a crashed licensed job: no
			// admission marker of its own, the holder id given explicitly.
			k := w.NewJob("release-fallback", "")
			k.Env["GITHUB_RUN_ID"] = j.Env["GITHUB_RUN_ID"]
			k.Input("holder-id", held[0].HolderID)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, Count: 1})
			require.NoError(t, releaseRun(context.Background(), k))
			assert.Equal(t, "true", k.Outputs()["released"])
			assert.Empty(t, w.State().Holders, "the seat is free again")
			assert.Contains(t, k.Out.String(), "stale")
		})
	})
	t.Run("a race lost after the head read is decided at the head again", func(t *testing.T) {
		// The first read is stale, the branch head shows the holder, the
		// write based on that head loses its race to another job's commit,
		// and the next ordinary read would come from a replica older still
		// (before the admission). Decided on that replica, the release
		// ended as a no-op and the seat stayed held until the reaper (issue
		// 26's intermittent acceptance failure).
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":2}`)
			w.SeedState(emptyState())
			j := w.NewJob("build", "runner-1")
			require.NoError(t, run(context.Background(), j))
			require.Len(t, w.State().Holders, 1)
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, Count: 1})
			d, raced := j.Deps(), false
			api := d.Transport
			d.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPut && !raced {
					raced = true
					// Another job's commit lands first; every ordinary read
					// after it is two versions behind.
					s := w.State()
					s.Queue = append(s.Queue, lockstate.Entry{HolderID: "acme/other:9:build:default", Repository: "acme/other", Workflow: "CI", Job: "build",
						RunID: "9", RunAttempt: "1", RunURL: "https://github.com/acme/other/actions/runs/9", QueuedAt: s.Holders[0].AcquiredAt, RunnerID: "runner-9"})
					w.SeedState(s)
					w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, StaleVersions: 2})
				}
				return api.RoundTrip(req)
			})
			j.ResetFiles()
			holder := w.State().Holders[0].HolderID
			require.NoError(t, release.Run(context.Background(), d))
			assert.True(t, raced)
			assert.Equal(t, "true", j.Outputs()["released"])
			assert.Equal(t, -1, lockstate.HolderIndex(w.State(), holder), "the seat is free again")
		})
	})
	t.Run("a no-op release is confirmed at the branch head", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.SeedState(emptyState())
			j := w.NewJob("build", "runner-1")
			require.NoError(t, releaseRun(context.Background(), j))
			assert.Equal(t, "noop", j.Outputs()["cleanup-result"])
			assert.Equal(t, int64(1), w.Em.Metrics().Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests,
				"the head read only: a release that found a state file does not check the branch (divergences A4)")
			assert.Contains(t, j.Out.String(), "Confirmed at the branch head")
			assert.Zero(t, w.Puts())
		})
	})
}

// TestPostStepOnEverySchema pins what the README and docs/actions.md say:
// a seat the post step finds still held is quarantined from schema 4 and
// freed on schemas 2 and 3, with a warning that says which.
func TestPostStepOnEverySchema(t *testing.T) {
	configs := map[int]string{
		2: `{"maxHolders":1}`,
		3: `{"maxHolders":1,"runnerSerialization":true}`,
		4: `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true}`,
		5: `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true}`,
		6: `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true}`,
	}
	for schema, cfg := range configs {
		t.Run(fmt.Sprint("schema ", schema), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, cfg)
				s := emptyState()
				s.SchemaVersion = schema
				if schema >= 4 {
					s.Reservations = []lockstate.Reservation{}
				}
				w.SeedState(s)
				j := w.NewJob("build", "runner-1")
				main := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "acquire-with-cleanup"})
				require.NoError(t, runDeps(context.Background(), main))
				post := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"})
				require.NoError(t, runDeps(context.Background(), post))
				got := w.State()
				assert.Empty(t, got.Holders)
				if schema >= 4 {
					require.Len(t, got.Reservations, 1)
					assert.Equal(t, lockstate.ReservationQuarantine, got.Reservations[0].State)
					assert.Contains(t, j.Out.String(), "the seat is quarantined")
				} else {
					assert.Empty(t, got.Reservations)
					assert.Contains(t, j.Out.String(), "no reservations to quarantine an unproven seat in, so the seat is free again")
				}
			})
		})
	}
}

// withEnv overlays env on d's environment.
func withEnv(d acquire.Deps, env map[string]string) acquire.Deps {
	base := d.Getenv
	d.Getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return base(k)
	}
	return d
}

// TestUnreadableConfigRefreshCapsCapacity: a waiting job whose config
// refresh cannot read the file admits with at most the safe default of one
// seat until a read succeeds (the reference's fail-closed defaults), and
// keeps the previous snapshot's requirements.
func TestUnreadableConfigRefreshCapsCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":2}`)
		h1, h2 := w.NewJob("one", "runner-1"), w.NewJob("two", "runner-2")
		require.NoError(t, run(context.Background(), h1))
		require.NoError(t, run(context.Background(), h2))
		j := w.NewJob("build", "runner-3")
		j.Env["BUILD_LOCK_CONFIG_TTL_MS"] = "1000"
		done := start(context.Background(), j)
		synctest.Wait()
		require.Len(t, w.State().Queue, 1, "both seats are taken: the job waits")

		id := w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.config.json", Kind: emulator.ServerError, Status: 503})
		// The refresh fails; h2's acquire read the config a minute ago, too
		// long for its release to clean up with that read
		// (lockaction.ConfigNoteMaxAge): the release reads the file too,
		// cannot, and uses the safe defaults.
		time.Sleep(lockaction.ConfigNoteMaxAge)
		releaseJob(t, h2) // a seat is free, but only one seat is trusted and h1 holds it
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		assert.Len(t, w.State().Queue, 1, "not admitted while the config is unreadable")
		assert.Contains(t, j.Out.String(), "admitting with at most 1 seat")

		w.Em.RemoveFault(id)
		require.NoError(t, <-done, "admitted once the config reads again")
		assert.Len(t, w.State().Holders, 2)
	})
}

// TestTimeoutWithAnUndecidedAdmissionIsAdmissionUnknown: the admission
// write is still without an answer when timeout-minutes runs out and no
// read decides it afterwards, so the retraction cannot run either: the
// outcome is admission-unknown (as docs/actions.md says), not timeout, and
// the release step, given the holder id, removes the admission if it landed.
func TestTimeoutWithAnUndecidedAdmissionIsAdmissionUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.Stall})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1})
		j := w.NewJob("build", "runner-1").Input("timeout-minutes", "1")
		err := run(context.Background(), j)
		require.Error(t, err)
		assert.Equal(t, "admission-unknown", lockaction.ReasonCode(err), "%v", err)
		assert.Equal(t, "admission-unknown", j.Outputs()["admission-result"])
		assert.Equal(t, "false", j.Outputs()["acquired"])
		assert.Equal(t, j.HolderID(), j.Outputs()["holder-id"])
	})
}

// markerAtPut records, at every state write the acquire step sends, the
// time it is sent and the time its pending-write marker names.
type markerAtPut struct {
	next   http.RoundTripper
	marker string
	mu     sync.Mutex
	sent   []time.Time
	named  []int64
}

func (m *markerAtPut) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/locks/seats.json") {
		ms := int64(-1)
		if b, err := os.ReadFile(m.marker); err == nil {
			ms, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
		m.mu.Lock()
		m.sent = append(m.sent, time.Now())
		m.named = append(m.named, ms)
		m.mu.Unlock()
	}
	return m.next.RoundTrip(r)
}

// TestPendingMarkerNamesTheLastWriteSent: the release of a job whose acquire
// died waits until lockaction.InFlightWindow after the write was sent. When
// the admission took several attempts (here two 502s and their backoff),
// the marker must name the last one: stamped once before the first, the
// window of a late retry ended before that retry could land
// (TestMachineQueueAcceptance failed so under CI load).
func TestPendingMarkerNamesTheLastWriteSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 502, Count: 2})
		j := w.NewJob("build", "runner-1")
		d := j.Deps()
		target := lockaction.Target{Owner: actiontest.Owner, Repo: actiontest.LockRepo, Lock: actiontest.Lock}
		rec := &markerAtPut{next: d.Transport, marker: lockaction.MarkerPath(j.Env["RUNNER_TEMP"], target, j.HolderID(), "pending-", "")}
		d.Transport = rec
		require.NoError(t, runDeps(context.Background(), d))
		assert.Equal(t, "true", j.Outputs()["acquired"])
		require.GreaterOrEqual(t, len(rec.sent), 3, "two refused attempts and the one that landed")
		last := len(rec.sent) - 1
		require.True(t, rec.sent[last].After(rec.sent[0]), "the attempts are spread by backoff")
		for i := range rec.sent {
			assert.Equal(t, rec.sent[i].UnixMilli(), rec.named[i], "attempt %d: the marker names the time it was sent", i)
		}
		_, err := os.Stat(rec.marker)
		assert.ErrorIs(t, err, os.ErrNotExist, "the answered write leaves no marker")
	})
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestPostStepCleansUpWithTheConfigTheMainStepRead: the post step less than
// lockaction.ConfigNoteMaxAge after the main step read the lock config
// cleans up with that read (one request less, divergences R13); later, it
// reads the file.
func TestPostStepCleansUpWithTheConfigTheMainStepRead(t *testing.T) {
	const configGET = "GET /repos/acme/build-lock/contents/locks/" + actiontest.Lock + ".config.json"
	for _, tc := range []struct {
		name  string
		after time.Duration
		reads int64
	}{{"at once: the note", 0, 0}, {"a minute later: a read", lockaction.ConfigNoteMaxAge, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1,"runnerSerialization":true}`)
				j := w.NewJob("build", "runner-1")
				main := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "acquire-with-cleanup"})
				require.NoError(t, runDeps(context.Background(), main))
				require.Len(t, w.State().Holders, 1)
				time.Sleep(tc.after)
				w.Em.ResetMetrics()
				post := withEnv(j.Deps(), map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"})
				require.NoError(t, runDeps(context.Background(), post))
				assert.Empty(t, w.State().Holders)
				assert.Equal(t, tc.reads, w.Em.Metrics().Paths[configGET].Requests)
				assert.Equal(t, tc.reads == 0, strings.Contains(j.Out.String(), "Using the lock config the main step read 2s ago."))
			})
		})
	}
}
