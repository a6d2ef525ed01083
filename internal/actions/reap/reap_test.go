package reap_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

const (
	owner = reaptest.Owner
	game  = reaptest.ConsumerRepo
	msgH  = "Reap capacity-critical stale state for " + reaptest.Lock
	msgQ  = "Auto-recover stale quarantine for " + reaptest.Lock
	msgQE = "Reap completed queue entries for " + reaptest.Lock
	seedM = "Seed locks/" + reaptest.Lock + ".json"
)

const (
	cfgLifecycle = `{"maxHolders":4,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":60}`
	cfgHealth    = `{"maxHolders":4,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":60}`
	cfgHealth0   = `{"maxHolders":4,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`
)

func deps(w *reaptest.World, tr http.RoundTripper) reap.Deps {
	if tr == nil {
		tr = w.API
	}
	return reap.Deps{Getenv: w.Getenv, Stdout: w.Stdout, Transport: tr, NewID: w.NewID, Jitter: func() float64 { return 0.5 }}
}

// run seeds a workflow run of repo and returns its id.
func run(w *reaptest.World, repo, status, conclusion string) int64 {
	return w.Em.CreateRun(owner, repo, emulator.Run{Workflow: "ci.yml", Status: status, Conclusion: conclusion})
}

func job(w *reaptest.World, repo string, runID int64, runner, status, conclusion string) int64 {
	return w.Em.AddJob(owner, repo, runID, 0, emulator.Job{Name: "build", RunnerName: runner, Status: status, Conclusion: conclusion})
}

// entry is the queue entry of run runID on runner (jobID 0 = none).
func entry(repo string, runID int64, runner string, jobID int64, queued time.Time) lockstate.Entry {
	e := lockstate.Entry{
		HolderID:   fmt.Sprintf("%s/%s:%d:build:default", owner, repo, runID),
		Repository: owner + "/" + repo, Workflow: "CI", Job: "build",
		RunID: fmt.Sprint(runID), RunAttempt: "1",
		RunURL:   fmt.Sprintf("%s/%s/%s/actions/runs/%d", reaptest.ServerURL, owner, repo, runID),
		QueuedAt: lockstate.FormatTime(queued), RunnerID: runner,
	}
	if jobID != 0 {
		e.JobID = fmt.Sprint(jobID)
	}
	return e
}

func holder(repo string, runID int64, runner string, jobID int64, acquired, expires time.Time) lockstate.Holder {
	return lockstate.Holder{Entry: entry(repo, runID, runner, jobID, acquired), AcquiredAt: lockstate.FormatTime(acquired), ExpiresAt: lockstate.FormatTime(expires)}
}

func state(schema int) *lockstate.State {
	s := lockstate.Empty(reaptest.Lock)
	s.SchemaVersion = schema
	s.UpdatedAt = lockstate.FormatTime(time.Now())
	if schema >= 4 {
		s.Reservations = []lockstate.Reservation{}
	}
	return s
}

func decode(t *testing.T, v emulator.Version) *lockstate.State {
	t.Helper()
	s, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: reaptest.Lock, ServerURL: reaptest.ServerURL})
	require.NoError(t, err)
	return s
}

func holderIDs(s *lockstate.State) []string {
	var out []string
	for _, h := range s.Holders {
		out = append(out, h.HolderID)
	}
	return out
}

func assertNoSecrets(t *testing.T, w *reaptest.World, err error) {
	t.Helper()
	// ::add-mask:: is how secrets are registered with the runner's log
	// redaction; every other line must be free of them.
	var logged []string
	for _, line := range strings.Split(w.Stdout.String(), "\n") {
		if !strings.HasPrefix(line, "::add-mask::") {
			logged = append(logged, line)
		}
	}
	texts := []string{strings.Join(logged, "\n"), w.Summary(), fmt.Sprint(w.Outputs())}
	if err != nil {
		texts = append(texts, err.Error())
	}
	for _, key := range []string{w.WriterKeyPEM, w.ReaderKeyPEM} {
		body := strings.Split(key, "\n")[1]
		for _, s := range texts {
			assert.NotContains(t, s, body)
		}
	}
	for _, s := range texts {
		assert.NotContains(t, s, "ghs_")
	}
}

// TestReapsEveryCrashedHolderInOneRun: three holders whose jobs died are
// all quarantined by one reaper run, in one checkpoint commit; the live
// holder with an expired lease is kept.
func TestReapsEveryCrashedHolderInOneRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		past, future := now.Add(-time.Hour), now.Add(time.Hour)

		runA := run(w, game, "completed", "failure") // the whole run ended
		runB := run(w, game, "in_progress", "")      // matrix: this leg ended, a sibling still runs
		jobB := job(w, game, runB, "r2", "completed", "success")
		job(w, game, runB, "r5", "in_progress", "")
		runC := int64(987654321) // deleted run, lease expired
		runL := run(w, game, "in_progress", "")
		jobL := job(w, game, runL, "r4", "in_progress", "")
		runN := run(w, game, "in_progress", "") // no exact job id: kept while the run is active

		s := state(4)
		s.Holders = []lockstate.Holder{
			holder(game, runA, "r1", 0, now.Add(-2*time.Hour), future),
			holder(game, runB, "r2", jobB, now.Add(-2*time.Hour), future),
			holder(game, runC, "r3", 0, now.Add(-5*time.Hour), past),
			holder(game, runL, "r4", jobL, now.Add(-5*time.Hour), past),
			holder(game, runN, "r6", 0, now.Add(-5*time.Hour), past.Add(time.Minute)),
		}
		s.Queue = []lockstate.Entry{entry(game, run(w, game, "queued", ""), "r7", 0, now)}
		w.SeedState(s)

		err := reap.Run(context.Background(), deps(w, nil))
		require.NoError(t, err)

		hist := w.History()
		require.Equal(t, []string{seedM, msgH}, w.Messages(), "one checkpoint commit for every proven stale holder")
		prev, cur := decode(t, hist[0]), decode(t, hist[1])
		assert.Len(t, cur.Holders, len(prev.Holders)-3, "the commit reaps the three proven holders")
		assert.Len(t, cur.Reservations, len(prev.Reservations)+3)
		assert.Equal(t, prev.Queue, cur.Queue, "the holder checkpoint never touches the queue")
		final := w.State()
		assert.ElementsMatch(t, []string{s.Holders[3].HolderID, s.Holders[4].HolderID}, holderIDs(final))
		require.Len(t, final.Reservations, 3)
		reasons := map[string]string{}
		for _, r := range final.Reservations {
			assert.Equal(t, lockstate.ReservationQuarantine, r.State)
			reasons[r.RunnerID] = r.Reason
		}
		assert.Equal(t, map[string]string{
			"r1": "scheduled stale reaping: holder run is completed (failure)",
			"r2": fmt.Sprintf("scheduled stale reaping: holder job %d is completed", jobB),
			"r3": "scheduled stale reaping: holder lease expired and run status is unavailable",
		}, reasons)

		out := w.Outputs()
		assert.Equal(t, "true", out["reaped"])
		assert.Equal(t, hist[len(hist)-1].BlobSHA, out["state-sha"])
		sum := w.Summary()
		for _, want := range []string{
			"Reaped 3 stale entries of seats in 1 checkpoint commit(s).",
			"run completed (failure), run_attempt 1",
			fmt.Sprintf("job %d completed (success) on r2", jobB),
			"run not found (HTTP 404) in a repository the reader can see",
			fmt.Sprintf("live: holder job %d is in_progress", jobL),
			"live: holder run is in_progress",
			"no recorded numeric job id",
			"quarantined as res-",
		} {
			assert.Contains(t, sum, markdown.Text(want))
		}
		assertNoSecrets(t, w, err)
	})
}

// TestReapFreesStaleHoldersBeforeSchema4 drops holders instead of
// quarantining them below schema 4.
func TestReapFreesStaleHoldersBeforeSchema4(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, `{"maxHolders":2,"runnerSerialization":true}`)
		now := time.Now()
		s := state(3)
		s.Holders = []lockstate.Holder{
			holder(game, run(w, game, "completed", "cancelled"), "r1", 0, now, now.Add(time.Hour)),
			holder(game, run(w, game, "completed", "success"), "r2", 0, now, now.Add(time.Hour)),
		}
		w.SeedState(s)
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgH}, w.Messages(), "both holders freed in one commit")
		assert.Empty(t, w.State().Holders)
		assert.Nil(t, w.State().Reservations)
		assert.Contains(t, w.Summary(), "holder removed, slot freed")
	})
}

// TestReapScanDeadlineChangesNothingUnverified stalls the status read of
// one queue entry until the 8-minute scan deadline: the holder proven
// before it is quarantined, the queue entry proven before it is removed in
// the FIFO-prefix checkpoint, and the stalled entry and every later one
// (even one whose run really finished) stay exactly where they were. The
// run fails with REAP_DEADLINE_ELAPSED after writing its outputs.
func TestReapScanDeadlineChangesNothingUnverified(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.AddConsumer("stuck", true)
		now := time.Now()
		start := now
		s := state(4)
		hStale := holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Hour))
		s.Holders = []lockstate.Holder{hStale}
		q1 := entry(game, run(w, game, "completed", "cancelled"), "r2", 0, now)
		q2 := entry("stuck", run(w, "stuck", "completed", "cancelled"), "r3", 0, now)
		q3 := entry(game, run(w, game, "completed", "success"), "r4", 0, now)
		q4 := entry(game, run(w, game, "queued", ""), "r5", 0, now)
		s.Queue = []lockstate.Entry{q1, q2, q3, q4}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/stuck/actions/runs/", Kind: emulator.Stall})

		err := reap.Run(context.Background(), deps(w, nil))
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeDeadlineElapsed, re.Code)
		elapsed := time.Since(start)
		assert.GreaterOrEqual(t, elapsed, reap.ScanBudget)
		assert.Less(t, elapsed, reap.TotalBudget)

		assert.Equal(t, []string{seedM, msgH, msgQE}, w.Messages())
		final := w.State()
		assert.Empty(t, final.Holders)
		require.Len(t, final.Reservations, 1)
		assert.Equal(t, []lockstate.Entry{q2, q3, q4}, final.Queue, "unverified entries keep their order and content")
		out := w.Outputs()
		assert.Equal(t, "true", out["reaped"])
		assert.Equal(t, w.History()[2].BlobSHA, out["state-sha"])
		sum := w.Summary()
		assert.Contains(t, sum, "status-scan deadline elapsed: 3 entries were not verified")
		assert.Contains(t, sum, "scan deadline elapsed during the status read")
		assert.Contains(t, sum, markdown.Text("REAP_DEADLINE_ELAPSED"))
	})
}

// TestReapScanDeadlineDuringHolders: when the deadline hits while holders
// are being read, no later holder and nothing of the queue changes.
func TestReapScanDeadlineDuringHolders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.AddConsumer("stuck", true)
		now := time.Now()
		s := state(4)
		stuck := holder("stuck", run(w, "stuck", "completed", "failure"), "r1", 0, now, now.Add(time.Minute))
		later := holder(game, run(w, game, "completed", "failure"), "r2", 0, now, now.Add(time.Hour))
		s.Holders = []lockstate.Holder{later, stuck}
		s.Queue = []lockstate.Entry{entry(game, run(w, game, "completed", "failure"), "r3", 0, now)}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/stuck/", Kind: emulator.Latency, Latency: time.Hour})

		err := reap.Run(context.Background(), deps(w, nil))
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeDeadlineElapsed, re.Code)
		assert.Equal(t, []string{seedM}, w.Messages(), "nothing was proven, nothing was written")
		assert.Equal(t, "false", w.Outputs()["reaped"])
		assert.Equal(t, w.History()[0].BlobSHA, w.Outputs()["state-sha"])
	})
}

// hookTransport runs before once, just before the first request matching
// match is forwarded: a concurrent writer slipping in between the reaper's
// read and its compare-and-swap write.
type hookTransport struct {
	next   http.RoundTripper
	match  func(*http.Request) bool
	before func()
	once   sync.Once
}

func (h *hookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.match(r) {
		h.once.Do(h.before)
	}
	return h.next.RoundTrip(r)
}

func isStatePut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/"+reaptest.StatePath())
}

// TestReapConflictReappliesOnlyProvenChanges: a concurrent write lands
// between the reaper's read and its checkpoint. The checkpoint re-reads and
// re-applies only what was proven: an unrelated change is kept, and a
// holder that a rerun refreshed (same holderId, new attempt) is not reaped
// by evidence about its previous attempt.
func TestReapConflictReappliesOnlyProvenChanges(t *testing.T) {
	t.Parallel()
	t.Run("unrelated concurrent change is kept", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := reaptest.New(t, cfgLifecycle)
			now := time.Now()
			s := state(4)
			dead := holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Hour))
			s.Holders = []lockstate.Holder{dead}
			w.SeedState(s)
			newcomer := entry(game, run(w, game, "queued", ""), "r9", 0, now)
			tr := &hookTransport{next: w.API, match: isStatePut, before: func() {
				c := s.Clone()
				c.Queue = append(c.Queue, newcomer)
				w.SeedState(c)
			}}
			require.NoError(t, reap.Run(context.Background(), deps(w, tr)))
			assert.Equal(t, []string{seedM, seedM, msgH}, w.Messages())
			final := w.State()
			assert.Empty(t, final.Holders)
			assert.Len(t, final.Reservations, 1)
			assert.Equal(t, []lockstate.Entry{newcomer}, final.Queue)
		})
	})
	t.Run("rerun's fresh holder is not reaped", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := reaptest.New(t, cfgLifecycle)
			now := time.Now()
			runID := run(w, game, "completed", "failure")
			old := holder(game, runID, "r1", 0, now.Add(-time.Hour), now.Add(time.Hour))
			s := state(4)
			s.Holders = []lockstate.Holder{old}
			w.SeedState(s)
			fresh := old
			fresh.RunAttempt, fresh.AcquiredAt, fresh.QueuedAt = "2", lockstate.FormatTime(now), lockstate.FormatTime(now)
			tr := &hookTransport{next: w.API, match: isStatePut, before: func() {
				c := s.Clone()
				c.Holders = []lockstate.Holder{fresh}
				w.SeedState(c)
			}}
			require.NoError(t, reap.Run(context.Background(), deps(w, tr)))
			assert.Equal(t, []string{seedM, seedM}, w.Messages(), "no checkpoint: the proven version is gone")
			assert.Equal(t, []lockstate.Holder{fresh}, w.State().Holders)
			assert.Contains(t, w.Summary(), "skipped: the fresh state no longer holds the proven version")
			assert.Equal(t, "false", w.Outputs()["reaped"])
		})
	})
}

// TestReapAmbiguousCheckpointIsReconciled: the checkpoint's response is
// lost after GitHub applied it; the retry conflicts, the re-read shows the
// holder gone, and nothing is written twice.
func TestReapAmbiguousCheckpointIsReconciled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Hour))}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgH}, w.Messages())
		assert.Len(t, w.State().Reservations, 1)
		assert.Equal(t, "true", w.Outputs()["reaped"])
		assert.Contains(t, w.Summary(), "already applied")
	})
}

// TestReapAutoRecoversQuarantinesAtSchema5 covers quarantine auto-recovery:
// aged quarantines of terminal runs become cooldowns (or are freed with a
// cooldown of 0), young ones and ones of active or unknown runs are kept,
// and nothing is recovered while an account incident is active.
func TestReapAutoRecoversQuarantinesAtSchema5(t *testing.T) {
	t.Parallel()
	quarantine := func(w *reaptest.World, id, runner, status string, created time.Time) lockstate.Reservation {
		runID := run(w, game, status, map[bool]string{true: "failure"}[status == "completed"])
		e := entry(game, runID, runner, 0, created)
		return lockstate.Reservation{ReservationID: id, HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job,
			RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: runner, Reason: "cleanup-evidence-unknown",
			State: lockstate.ReservationQuarantine, CreatedAt: lockstate.FormatTime(created)}
	}
	setup := func(t *testing.T, cfg string) (*reaptest.World, *lockstate.State) {
		w := reaptest.New(t, cfg)
		now := time.Now()
		old := now.Add(-reap.DefaultLeaseGrace - time.Minute)
		s := state(5)
		s.Reservations = []lockstate.Reservation{
			quarantine(w, "q-terminal-1", "r1", "completed", old),
			quarantine(w, "q-terminal-2", "r2", "completed", old),
			quarantine(w, "q-young", "r3", "completed", now.Add(-time.Hour)),
			quarantine(w, "q-active", "r4", "in_progress", old),
		}
		return w, s
	}

	t.Run("converted to cooldowns, each in its own commit", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w, s := setup(t, cfgHealth)
			w.SeedState(s)
			require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
			assert.Equal(t, []string{seedM, msgQ, msgQ}, w.Messages())
			final := w.State()
			byID := map[string]lockstate.Reservation{}
			for _, r := range final.Reservations {
				byID[r.ReservationID] = r
			}
			for _, id := range []string{"q-terminal-1", "q-terminal-2"} {
				r := byID[id]
				assert.Equal(t, lockstate.ReservationCooldown, r.State)
				assert.Equal(t, "auto-recovered stale quarantine (owning run terminal): cleanup-evidence-unknown", r.Reason)
				// Each in its own commit, the second one write spacing
				// (ghclient.MinWriteSpacing) after the first.
				assert.Contains(t, []string{lockstate.FormatTime(time.Now().Add(59 * time.Second)), lockstate.FormatTime(time.Now().Add(60 * time.Second))}, r.AvailableAt)
			}
			assert.Equal(t, lockstate.ReservationQuarantine, byID["q-young"].State)
			assert.Equal(t, lockstate.ReservationQuarantine, byID["q-active"].State)
			sum := w.Summary()
			assert.Contains(t, sum, "younger than the 4h0m0s auto-recovery grace")
			assert.Contains(t, sum, markdown.Text("live: owning run is in_progress"))
		})
	})
	t.Run("cooldown 0 frees the slot", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w, s := setup(t, cfgHealth0)
			w.SeedState(s)
			require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
			final := w.State()
			var ids []string
			for _, r := range final.Reservations {
				ids = append(ids, r.ReservationID)
			}
			assert.Equal(t, []string{"q-young", "q-active"}, ids)
			assert.Contains(t, w.Summary(), "quarantine removed, slot freed (releaseCooldownSeconds 0")
		})
	})
	t.Run("skipped while an incident is active", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w, s := setup(t, cfgHealth)
			inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: owner + "/" + game, Workflow: "CI", Job: "build", RunID: "77", RunAttempt: "1", RunnerID: "r9"}, time.Now(), reaptest.ServerURL)
			require.NoError(t, err)
			s.ActiveIncident = inc
			w.SeedState(s)
			require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
			assert.Equal(t, []string{seedM}, w.Messages())
			assert.Contains(t, w.Summary(), "auto-recovery skipped: account incident "+inc.IncidentID+" is active")
			assert.Zero(t, w.Em.Metrics().Paths["GET /repos/acme/build-lock/contents/locks/seats.config.json"].Requests, "no config read when nothing is recovered")
		})
	})
	t.Run("not at schema 4", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w, s := setup(t, cfgLifecycle)
			s.SchemaVersion = 4
			w.SeedState(s)
			require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
			assert.Equal(t, []string{seedM}, w.Messages())
		})
	})
}

// TestReapQueueCleanupAfterHolders removes finished queue entries in one
// write after the holder checkpoints, keeping FIFO order.
func TestReapQueueCleanupAfterHolders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Hour))}
		runAdv := run(w, game, "in_progress", "")
		w.Em.NewRunAttempt(owner, game, runAdv)
		runJob := run(w, game, "in_progress", "")
		jobDone := job(w, game, runJob, "r4", "completed", "success")
		keep1 := entry(game, run(w, game, "queued", ""), "r2", 0, now)
		keep2 := entry(game, 555555, "r6", 0, now) // deleted run: unknown, no lease fallback for queue entries
		s.Queue = []lockstate.Entry{
			entry(game, run(w, game, "completed", "cancelled"), "r7", 0, now),
			keep1,
			entry(game, runAdv, "r3", 0, now),
			entry(game, runJob, "r4", jobDone, now),
			keep2,
		}
		s.Reservations = []lockstate.Reservation{{ReservationID: "c-old", HolderID: "x:1:j:d", Repository: owner + "/" + game, Workflow: "CI", Job: "j",
			RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/1", RunnerID: "r8", Reason: "cleanup-confirmed",
			State: lockstate.ReservationCooldown, CreatedAt: lockstate.FormatTime(now.Add(-time.Hour)), AvailableAt: lockstate.FormatTime(now.Add(-time.Minute))}}
		w.SeedState(s)
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgH, msgQE}, w.Messages())
		final := w.State()
		assert.Equal(t, []lockstate.Entry{keep1, keep2}, final.Queue)
		require.Len(t, final.Reservations, 1, "the expired cooldown was pruned, the new quarantine stays")
		assert.Equal(t, lockstate.ReservationQuarantine, final.Reservations[0].State)
	})
}

// TestReapNothingToDo writes nothing and reports it.
func TestReapNothingToDo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		runID := run(w, game, "in_progress", "")
		s.Holders = []lockstate.Holder{holder(game, runID, "r1", job(w, game, runID, "r1", "in_progress", ""), now, now.Add(-time.Minute))}
		w.SeedState(s)
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM}, w.Messages())
		assert.Equal(t, map[string]string{"reaped": "false", "state-sha": w.History()[0].BlobSHA}, w.Outputs())
		assert.Contains(t, w.Summary(), "No stale state found for seats.")
	})
}

// TestReapEvidenceErrorKeepsEntryAndFailsVisibly: a holder in a repository
// the reader App cannot see is kept, the other stale holder is still
// reaped, and the run fails with REAP_EVIDENCE_UNAVAILABLE.
func TestReapEvidenceErrorKeepsEntryAndFailsVisibly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.AddConsumer("hidden", false)
		now := time.Now()
		s := state(4)
		hidden := holder("hidden", run(w, "hidden", "completed", "failure"), "r1", 0, now, now.Add(-time.Hour))
		dead := holder(game, run(w, game, "completed", "failure"), "r2", 0, now, now.Add(time.Hour))
		s.Holders = []lockstate.Holder{hidden, dead}
		w.SeedState(s)
		err := reap.Run(context.Background(), deps(w, nil))
		var re *reap.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, reap.CodeEvidenceUnavailable, re.Code)
		var ee *reap.EvidenceError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, reap.RuleRepositoryUnverifiable, ee.Rule)
		assert.Equal(t, []string{seedM, msgH}, w.Messages())
		assert.Equal(t, []lockstate.Holder{hidden}, w.State().Holders, "an unverifiable holder is never reaped, even with an expired lease")
		assertNoSecrets(t, w, err)
	})
}

// TestReapRefusals: every setup refusal fails before anything is written.
func TestReapRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		rule string
	}{
		{"reader credentials missing", map[string]string{"BUILD_LOCK_READER_APP_ID": "", "BUILD_LOCK_READER_APP_PRIVATE_KEY": ""}, reap.RuleReaderCredentials},
		{"reader id without key", map[string]string{"BUILD_LOCK_READER_APP_PRIVATE_KEY": ""}, reap.RuleReaderCredentials},
		{"not the lock repository", map[string]string{"GITHUB_REPOSITORY": owner + "/" + game}, "lock-repository-only"},
		{"unknown operation", map[string]string{"INPUT_OPERATION": "purge"}, "operation"},
		{"writer credentials missing", map[string]string{"BUILD_LOCK_APP_ID": ""}, "app-credentials"},
		{"legacy token", map[string]string{"BUILD_LOCK_TOKEN": "ghp_legacy"}, "legacy-token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := reaptest.New(t, cfgLifecycle)
				now := time.Now()
				s := state(4)
				s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now)}
				w.SeedState(s)
				for k, v := range tc.env {
					w.Env[k] = v
				}
				err := reap.Run(context.Background(), deps(w, nil))
				var re *lockaction.RefusalError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, tc.rule, re.Rule)
				assert.Equal(t, []string{seedM}, w.Messages())
				assert.Zero(t, w.Em.Metrics().Requests, "refused before any request")
				assert.NotContains(t, err.Error(), "ghp_legacy")
			})
		})
	}
}

// TestReapMainExitCodes maps results to exit codes and one ::error:: line.
func TestReapMainExitCodes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		w.SeedState(state(4))
		assert.Equal(t, lockaction.ExitOK, reap.Main(context.Background(), deps(w, nil), nil))
		w.Env["BUILD_LOCK_READER_APP_ID"] = ""
		assert.Equal(t, lockaction.ExitFailure, reap.Main(context.Background(), deps(w, nil), nil))
		assert.Contains(t, w.Stdout.String(), "::error title=reader-credentials::")
		assert.Equal(t, lockaction.ExitFailure, reap.Main(context.Background(), reap.Deps{}, nil))
	})
}

// TestReapFailureCodeIsTheErrorTitle: a reaper failure carries its REAP_
// code in the ::error title, as every refusal of the suite does, and in
// the summary's heading.
func TestReapFailureCodeIsTheErrorTitle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Queue = []lockstate.Entry{entry(game, run(w, game, "completed", "cancelled"), "r2", 0, now)}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/game/actions/runs/", Kind: emulator.Stall})
		assert.Equal(t, lockaction.ExitFailure, reap.Main(context.Background(), deps(w, nil), nil))
		out := w.Stdout.String()
		assert.Contains(t, out, "::error title="+reap.CodeDeadlineElapsed+"::")
		assert.NotContains(t, out, "::error::")
		assert.Contains(t, w.Summary(), "Refused: `"+reap.CodeDeadlineElapsed+"`")
	})
}

// TestReapCancelled stops without writing when the runner cancels.
func TestReapCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now)}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/game/actions/", Kind: emulator.Stall})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Minute, cancel)
		err := reap.Run(ctx, deps(w, nil))
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
		assert.Equal(t, []string{seedM}, w.Messages())
	})
}

// TestReapOverRealHTTPReturnsTheSeat is the demo scenario on a real HTTP
// server and real time: a job died holding the only seat of a schema-3
// lock while another waits; the reaper proves the dead job's run finished,
// removes its holder, and the seat is free for the waiting job.
func TestReapOverRealHTTPReturnsTheSeat(t *testing.T) {
	t.Parallel()
	w := reaptest.New(t, `{"maxHolders":1,"runnerSerialization":true,"releaseCooldownSeconds":0}`)
	srv := httptest.NewServer(w.Em.Handler())
	t.Cleanup(srv.Close)
	w.Env["GITHUB_API_URL"] = srv.URL + "/"
	now := time.Now()
	dead := run(w, game, "in_progress", "")
	deadJob := job(w, game, dead, "r1", "in_progress", "")
	s := state(3)
	s.Holders = []lockstate.Holder{holder(game, dead, "r1", deadJob, now, now.Add(4*time.Hour))}
	s.Queue = []lockstate.Entry{entry(game, run(w, game, "in_progress", ""), "r2", 0, now)}
	w.SeedState(s)
	// The runner died: GitHub fails the job about ten minutes later.
	require.NoError(t, w.Em.SetJobStatus(owner, game, deadJob, "completed", "failure"))

	require.NoError(t, reap.Run(context.Background(), reap.Deps{Getenv: w.Getenv, Stdout: w.Stdout}))
	final := w.State()
	assert.Empty(t, final.Holders)
	assert.Len(t, final.Queue, 1, "the waiting job keeps its place")
	assert.Equal(t, 1, lockstate.FreeSlots(final, lockstate.Config{MaxHolders: 1}), "the seat returned")
	assert.Equal(t, "true", w.Outputs()["reaped"])
}
