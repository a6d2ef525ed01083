package release_test

import (
	"context"
	"os"
	"strings"
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

var allOutputs = []string{"released", "queue-cleaned", "cleanup-result", "lock-name", "holder-id", "state-sha", "held-by", "held-by-run-url",
	"reservation-id", "reservation-state", "available-at", "incident-id", "resource-health", "resource-reason", "report-degraded", "report-validation-error"}

func TestCleanupResults(t *testing.T) {
	cases := []struct {
		name, config string
		schema       int
		report       map[string]string
		want         string
		reservation  string
	}{
		{"released below schema 4", `{"maxHolders":1}`, 0, map[string]string{"resource-cleanup-status": "confirmed"}, "released", ""},
		{"released with cooldown 0", lifecycle0, 4, map[string]string{"resource-cleanup-status": "confirmed"}, "released", ""},
		{"cooldown-started", lifecycle60, 4, map[string]string{"resource-cleanup-status": "confirmed"}, "cooldown-started", "cooldown"},
		{"quarantined", lifecycle60, 4, map[string]string{"resource-cleanup-status": "unknown"}, "quarantined", "quarantine"},
		{"legacy resource-safe", lifecycle60, 4, map[string]string{"resource-safe": "true"}, "cooldown-started", "cooldown"},
		{"global-quarantined", health, 5, map[string]string{"resource-cleanup-status": "unknown", "resource-health": "blocked", "resource-reason": "unity-account-limit-20111"}, "global-quarantined", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, tc.config)
				if tc.schema > 0 {
					seedSchema(w, tc.schema)
				}
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				for k, v := range tc.report {
					j.Input(k, v)
				}
				require.NoError(t, rel(j))
				out := j.Outputs()
				for _, name := range allOutputs {
					assert.Contains(t, out, name)
				}
				assert.Equal(t, tc.want, out["cleanup-result"])
				assert.Equal(t, "true", out["released"])
				assert.Equal(t, "false", out["report-degraded"])
				assert.Equal(t, tc.reservation, out["reservation-state"])
				s := w.State()
				assert.Empty(t, s.Holders)
				h := w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath)
				assert.Equal(t, h[len(h)-1].BlobSHA, out["state-sha"])
				if tc.want == "global-quarantined" {
					require.NotNil(t, s.ActiveIncident)
					assert.Equal(t, s.ActiveIncident.IncidentID, out["incident-id"])
					assert.Equal(t, "blocked", out["resource-health"])
				}
				assert.Contains(t, j.Summary(), "`"+tc.want+"`")
			})
		})
	}
}

func TestQueueOnlyNoopAndHeldBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		a := w.NewJob("holder", "runner-a")
		hold(t, a)
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "1")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- acquire.Run(ctx, b.Deps()) }()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()))
		// A fallback release of a run that never held only leaves the queue.
		r := w.NewJob("waiter", "runner-b")
		r.Env = b.Env
		require.NoError(t, rel(r))
		out := r.Outputs()
		assert.Equal(t, "queue-cleaned", out["cleanup-result"])
		assert.Equal(t, "false", out["released"])
		assert.Equal(t, "true", out["queue-cleaned"])
		assert.Equal(t, a.HolderID(), out["held-by"])
		cancel()
		<-done

		c := w.NewJob("other", "runner-c")
		require.NoError(t, rel(c))
		out = c.Outputs()
		assert.Equal(t, "noop", out["cleanup-result"])
		assert.Equal(t, a.HolderID(), out["held-by"])
		assert.Contains(t, c.Out.String(), "Lock is held by "+a.HolderID())
		assert.NotEmpty(t, out["state-sha"], "a noop reports the sha it observed")
	})
}

func TestDegradedReportStillCleansUp(t *testing.T) {
	cases := map[string]map[string]string{
		"invalid-resource-safe":                 {"resource-safe": "maybe"},
		"invalid-resource-cleanup-status":       {"resource-cleanup-status": "done"},
		"invalid-resource-health":               {"resource-health": "ok"},
		"invalid-resource-reason":               {"resource-reason": "because"},
		"blocked-health-reason-mismatch":        {"resource-health": "blocked", "resource-reason": "return-timeout"},
		"account-limit-health-mismatch":         {"resource-reason": "unity-account-limit-20111"},
		"account-limit-cleanup-status-mismatch": {"resource-cleanup-status": "confirmed", "resource-health": "blocked", "resource-reason": "unity-account-limit-20111"},
		"confirmed-cleanup-reason-mismatch":     {"resource-cleanup-status": "confirmed", "resource-reason": "return-timeout"},
		"cleanup-confirmed-status-mismatch":     {"resource-cleanup-status": "unknown", "resource-reason": "cleanup-confirmed"},
		"resource-safe-contradiction":           {"resource-safe": "true", "resource-cleanup-status": "unknown"},
	}
	for code, inputs := range cases {
		t.Run(code, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, lifecycle60)
				seedSchema(w, 4)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				for k, v := range inputs {
					j.Input(k, v)
				}
				err := rel(j)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "after report validation failed: "+code)
				out := j.Outputs()
				assert.Equal(t, "true", out["report-degraded"])
				assert.Equal(t, code, out["report-validation-error"])
				assert.Equal(t, "quarantined", out["cleanup-result"], "a degraded report quarantines the held slot")
				assert.Equal(t, "cleanup-evidence-unknown", out["resource-reason"])
				for _, v := range inputs {
					if v != "true" && v != "unknown" && v != "confirmed" {
						assert.NotContains(t, j.Out.String(), "="+v, "the rejected value is never logged")
					}
				}
				assert.Empty(t, w.State().Holders)
			})
		})
	}
}

func TestLockReleaseUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("resource-cleanup-status", "confirmed").Input("release-retry-deadline-seconds", "30")
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 503})
		began := time.Now()
		err := rel(j)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "lock-release-unreachable")
		assert.LessOrEqual(t, time.Since(began), 45*time.Second, "bounded by the 30 s deadline")
		out := j.Outputs()
		assert.Equal(t, "lock-release-unreachable", out["cleanup-result"])
		assert.Equal(t, "false", out["released"])
		assert.Empty(t, out["state-sha"])
		assert.Empty(t, out["reservation-id"])
	})
	t.Run("unconfirmed report keeps the raw failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, lifecycle60)
			seedSchema(w, 4)
			j := w.NewJob("build", "runner-1")
			hold(t, j)
			j.Input("release-retry-deadline-seconds", "30")
			w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 503})
			err := rel(j)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "lock-release-unreachable")
			assert.Empty(t, j.Outputs())
		})
	})
}

func TestDeadlinePhasesAbortStalledRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("resource-cleanup-status", "confirmed")
		time.Sleep(lockaction.ConfigNoteMaxAge) // acquire's config read no longer stands for the release's
		w.Em.ResetMetrics()
		begin := time.Now()
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/git/ref/", Kind: emulator.Stall})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.config.json", Kind: emulator.Stall})
		require.NoError(t, rel(j))
		assert.Equal(t, "cooldown-started", j.Outputs()["cleanup-result"])
		assert.Zero(t, w.Em.Metrics().Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests,
			"a release that finds its state file never checks the branch (divergences A4)")
		var put time.Time
		for _, r := range w.Em.Metrics().Log {
			if r.Method == "PUT" {
				put = r.Time
			}
		}
		phase := put.Sub(begin)
		assert.GreaterOrEqual(t, phase, 30*time.Second, "the config phase owns the rest of the first quarter")
		assert.Less(t, phase, 35*time.Second, "stalled reads are aborted at their phase deadlines")
	})
}

func TestPhaseDeadlines(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		seconds                 int
		branch, config, cleanup time.Duration
	}{
		{120, 15 * time.Second, 30 * time.Second, 120 * time.Second},
		{30, 3750 * time.Millisecond, 7500 * time.Millisecond, 30 * time.Second},
		{3600, 450 * time.Second, 900 * time.Second, 3600 * time.Second},
	}
	for _, tc := range cases {
		p := release.PhaseDeadlines(start, tc.seconds)
		assert.Equal(t, tc.branch, p.Branch.Sub(start))
		assert.Equal(t, tc.config, p.Config.Sub(start))
		assert.Equal(t, tc.cleanup, p.Cleanup.Sub(start))
	}
	assert.Equal(t, release.Phases{}, release.PhaseDeadlines(start, 0))
}

func TestTolerantKnobInputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("release-retry-deadline-seconds", "10").Input("api-max-attempts", "7").Input("api-retry-base-ms", "5")
		require.NoError(t, rel(j))
		out := j.Out.String()
		assert.Contains(t, out, "input release-retry-deadline-seconds must be an integer in 30-3600 or 0; using 120")
		assert.Contains(t, out, "Ignoring invalid input api-retry-base-ms")
		assert.Contains(t, out, "An attempt ceiling of 7 bounds the 120s release retry deadline")
		assert.Equal(t, "released", j.Outputs()["cleanup-result"])
	})
}

func TestExplicitHolderID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		fallback := w.NewJob("fallback", "")
		fallback.Env["GITHUB_RUN_ID"] = j.Env["GITHUB_RUN_ID"]
		for _, bad := range []string{"acme/other:1:build:default", j.Env["GITHUB_REPOSITORY"] + ":" + j.Env["GITHUB_RUN_ID"] + "::default", j.HolderID() + "\nx"} {
			fallback.Input("holder-id", bad)
			err := rel(fallback)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "holder-id")
		}
		assert.Len(t, w.State().Holders, 1)
		fallback.Input("holder-id", j.HolderID())
		require.NoError(t, rel(fallback))
		assert.Equal(t, "released", fallback.Outputs()["cleanup-result"])
		assert.Empty(t, w.State().Holders)
	})
}

func TestAmbiguousReleaseIsReconciled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("resource-cleanup-status", "confirmed")
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		require.NoError(t, rel(j))
		out := j.Outputs()
		assert.Equal(t, "cooldown-started", out["cleanup-result"])
		assert.Equal(t, "true", out["released"])
		s := w.State()
		require.Len(t, s.Reservations, 1)
		assert.Equal(t, s.Reservations[0].ReservationID, out["reservation-id"])
	})
}

// TestEveryAnswerLostIsDecidedByAReadAtTheHead: every answer to the
// release's writes is lost until the release deadline (the first write
// landed; each retry would have been refused, unseen). One read at the
// branch head afterwards decides: the entry is gone, so the release landed
// and is reported with its cooldown, exit 0. With the entry still there the
// failure stands.
func TestEveryAnswerLostIsDecidedByAReadAtTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("resource-cleanup-status", "confirmed")
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost})
		require.NoError(t, rel(j))
		out := j.Outputs()
		assert.Equal(t, "true", out["released"])
		assert.Equal(t, "cooldown-started", out["cleanup-result"])
		s := w.State()
		assert.Empty(t, s.Holders)
		require.Len(t, s.Reservations, 1)
		assert.Equal(t, s.Reservations[0].ReservationID, out["reservation-id"])
		assert.Contains(t, j.Out.String(), "so the release landed")
	})
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		j.Input("resource-cleanup-status", "confirmed")
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.TransportReset})
		err := rel(j)
		require.Error(t, err)
		assert.Equal(t, "lock-release-unreachable", j.Outputs()["cleanup-result"], "nothing landed: the record stays in doubt")
		assert.Len(t, w.State().Holders, 1)
	})
}

// TestRunnerIDRequiredFromSchema3: from schema 3 a release needs the
// runner's identity; an empty runner-id is the runner's own RUNNER_NAME,
// and only a step with neither is refused.
func TestRunnerIDRequiredFromSchema3(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, lifecycle60)
		seedSchema(w, 4)
		j := w.NewJob("build", "runner-1")
		hold(t, j)
		delete(j.Env, "INPUT_RUNNER-ID")
		runnerName := j.Env["RUNNER_NAME"]
		delete(j.Env, "RUNNER_NAME")
		err := rel(j)
		require.ErrorContains(t, err, "runner-id is required")
		assert.Empty(t, j.Outputs())

		j.Env["RUNNER_NAME"] = runnerName
		require.NoError(t, rel(j))
		assert.Equal(t, "true", j.Outputs()["released"], "the runner's name stands for an empty runner-id")
	})
}

// TestNoopReleaseCreatesNoBranch: the always() release of a job that never
// acquired, on a brand-new lock, finds nothing and writes nothing, and
// leaves no lock-state branch behind.
func TestNoopReleaseCreatesNoBranch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		require.NoError(t, release.Run(context.Background(), j.Deps()))
		assert.Equal(t, "noop", j.Outputs()["cleanup-result"])
		_, ok := w.Em.BranchHead(actiontest.Owner, actiontest.LockRepo, "lock-state")
		assert.False(t, ok, "a no-op release created the lock-state branch")
		assert.Zero(t, w.Puts())
		for _, r := range w.Em.Metrics().Log {
			assert.NotContains(t, r.Path, "/git/refs", "no branch creation")
		}
	})
}

// TestBranchIsCheckedOnlyWhenNoStateIsFound: the reference's branch check
// before every release is left out (divergences A4). A release whose state
// read found no state file reads the branch head to confirm it, which
// checks the branch: a missing branch is a no-op, and a head that cannot be
// read within the deadline is LOCK_STATE_UNVERIFIED, as in the reference,
// with nothing written either way.
func TestBranchIsCheckedOnlyWhenNoStateIsFound(t *testing.T) {
	const refPath = "GET /repos/acme/build-lock/git/ref/heads/lock-state"
	t.Run("a missing branch is a no-op", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			require.NoError(t, rel(j))
			assert.Equal(t, "noop", j.Outputs()["cleanup-result"])
			assert.Equal(t, int64(1), w.Em.Metrics().Paths[refPath].Requests, "one branch read: the head confirmation")
			assert.Zero(t, w.Puts())
		})
	})
	t.Run("an unanswered check is LOCK_STATE_UNVERIFIED", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/git/ref/", Kind: emulator.Stall})
			begin := time.Now()
			err := rel(j)
			require.Error(t, err)
			assert.Contains(t, err.Error(), release.CodeLockStateUnverified+": the lock-state branch of seats could not be verified and no lock state was found")
			assert.LessOrEqual(t, time.Since(begin), 121*time.Second, "bounded by the release deadline")
			assert.Zero(t, w.Puts())
		})
	})
	t.Run("a release that finds its state does not check", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := w.NewJob("build", "runner-1")
			hold(t, j)
			w.Em.ResetMetrics()
			require.NoError(t, rel(j))
			assert.Equal(t, "true", j.Outputs()["released"])
			assert.Zero(t, w.Em.Metrics().Paths[refPath].Requests)
		})
	})
}

// TestReleaseReadsTheConfigConditionallyWithAcquiresAnswer: a release whose
// job held its seat longer than a minute reads the config again, but
// conditionally with acquire's noted answer under acquire's token: a 304,
// no primary rate limit, while the file is unchanged. A changed file, a
// minted token (ETags are token-specific) or a note a step without the
// App's key edited gets a full read.
func TestReleaseReadsTheConfigConditionallyWithAcquiresAnswer(t *testing.T) {
	const configGET = "GET /repos/acme/build-lock/contents/locks/" + actiontest.Lock + ".config.json"
	for _, tc := range []struct {
		name          string
		after         time.Duration
		change, forge bool
		notModified   int64
	}{
		{"two minutes after acquire, unchanged: a 304", 2 * time.Minute, false, false, 1},
		{"the file changed: a full read of the new file", 2 * time.Minute, true, false, 0},
		{"56 minutes after, a new token: a full read", 56 * time.Minute, false, false, 0},
		{"a note whose answer a step without the key edited: a full read", 2 * time.Minute, false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				if tc.change {
					w.SetConfig(`{"maxHolders":2}`)
				}
				if tc.forge {
					editNote(t, noteFile(t, j, "config-"), func(note map[string]any) {
						resp, ok := note["response"].(map[string]any)
						require.True(t, ok, "acquire noted its answer")
						resp["body"] = []byte(`{"forged":true}`)
					})
				}
				time.Sleep(tc.after)
				w.Em.ResetMetrics()
				require.NoError(t, rel(j))
				assert.Equal(t, "true", j.Outputs()["released"])
				assert.Empty(t, w.State().Holders)
				m := w.Em.Metrics().Paths[configGET]
				assert.Equal(t, int64(1), m.Requests, "one config read")
				assert.Equal(t, tc.notModified, m.NotModified)
				assert.Equal(t, 1-tc.notModified, m.Charged)
			})
		})
	}
}

// TestReleaseUsesTheTokenAcquireMinted: release uses the installation
// token acquire minted (sealed in RUNNER_TEMP under a key only the App's
// private key gives) while it is fresh, and says so; a token that has
// expired meanwhile, or a note that is gone, costs one mint (divergences
// R14).
func TestReleaseUsesTheTokenAcquireMinted(t *testing.T) {
	mints := func(w *actiontest.World) (n int64) {
		for p, m := range w.Em.Metrics().Paths {
			if strings.HasPrefix(p, "POST /app/installations/") {
				n += m.Requests
			}
		}
		return n
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		drop  bool
		mints int64
	}{
		{"ten minutes after acquire: its token", 10 * time.Minute, false, 0},
		{"56 minutes after: its token expires within five, a mint", 56 * time.Minute, false, 1},
		{"no token note: a mint", 10 * time.Minute, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				note := noteFile(t, j, "token-")
				if tc.drop {
					require.NoError(t, os.Remove(note))
				}
				time.Sleep(tc.after)
				w.Em.ResetMetrics()
				require.NoError(t, rel(j))
				assert.Equal(t, "true", j.Outputs()["released"])
				assert.Empty(t, w.State().Holders)
				assert.Equal(t, tc.mints, mints(w))
				if tc.mints == 0 {
					assert.Contains(t, j.Out.String(), "Using the installation token this job's acquire step minted")
				} else {
					assert.NotContains(t, j.Out.String(), "Using the installation token")
				}
			})
		})
	}
}

// TestReleaseMintsFromTheInstallationAcquireLookedUp: the release step of a
// job whose acquire looked the writer App's installation up mints from it
// without a lookup of its own (one App JWT request less per job, issue 23);
// a note naming an installation that is gone costs one lookup and the
// release still releases.
func TestReleaseMintsFromTheInstallationAcquireLookedUp(t *testing.T) {
	const lookup = "GET /repos/acme/build-lock/installation"
	for _, tc := range []struct {
		name    string
		gone    bool
		lookups int64
	}{{"the installation acquire found", false, 0}, {"a note naming an installation that is gone", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				j := w.NewJob("build", "runner-1")
				hold(t, j)
				note := noteFile(t, j, "installation-")
				if tc.gone {
					editNote(t, note, func(note map[string]any) { note["id"] = 987654 })
				}
				w.Em.ResetMetrics()
				require.NoError(t, rel(j))
				assert.Equal(t, "true", j.Outputs()["released"])
				assert.Empty(t, w.State().Holders)
				assert.Equal(t, tc.lookups, w.Em.Metrics().Paths[lookup].Requests)
			})
		})
	}
}
