package release_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestReleaseHandsTheSeatOff: at schema <= 3 the release write also admits
// the next waiter (lockstate.Handoff), so the waiter's own admission write
// disappears: it learns it holds the seat on its next poll, which writes
// nothing. At schema 4 (a seat may hold an activated license) the release
// only frees the seat and the waiter admits itself.
func TestReleaseHandsTheSeatOff(t *testing.T) {
	cases := []struct {
		name, config string
		schema       int
		handoff      bool
	}{
		{"schema 3 hands off", `{"maxHolders":1,"runnerSerialization":true}`, 3, true},
		{"schema 4 does not", `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":0}`, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, a, b, done := holderAndWaiter(t, tc.config, tc.schema)

				puts := w.Puts()
				a.Input("resource-cleanup-status", "confirmed")
				require.NoError(t, rel(a))
				assert.Equal(t, "released", a.Outputs()["cleanup-result"])
				afterRelease := w.State()
				if tc.handoff {
					require.Len(t, afterRelease.Holders, 1)
					assert.Equal(t, b.HolderID(), afterRelease.Holders[0].HolderID, "the release write admitted b")
					assert.Empty(t, afterRelease.Queue)
					assert.Equal(t, lockstate.FormatTime(time.Now().Add(lockstate.HandoffLease)), afterRelease.Holders[0].ExpiresAt)
					assert.Contains(t, a.Out.String(), "Handed the freed seat of "+actiontest.Lock+" directly to "+b.HolderID())
				} else {
					assert.Empty(t, afterRelease.Holders)
					assert.NotContains(t, a.Out.String(), "Handed the freed seat")
				}
				require.NoError(t, <-done)
				assert.Equal(t, "true", b.Outputs()["acquired"])
				s := w.State()
				require.Len(t, s.Holders, 1)
				assert.Equal(t, b.HolderID(), s.Holders[0].HolderID)
				writes := w.Puts() - puts
				if tc.handoff {
					assert.Equal(t, int64(1), writes, "one write for the release and b's admission")
				} else {
					assert.Equal(t, int64(2), writes, "the release, then b's own admission")
				}
			})
		})
	}
}

// TestReleaseCleansUpWithTheConfigAcquireRead: a release less than
// lockaction.ConfigNoteMaxAge after its acquire read the lock config cleans
// up with that read instead of reading the file again (one request less
// per job, divergences R13), so a config change reaches it at most that
// much later; an older read, or a job without the note of its installation
// (the owner pin must decide before the first request), or a note that a
// step without the App's key rewrote, reads the file.
func TestReleaseCleansUpWithTheConfigAcquireRead(t *testing.T) {
	const configGET = "GET /repos/acme/build-lock/contents/locks/" + actiontest.Lock + ".config.json"
	for _, tc := range []struct {
		name        string
		after       time.Duration
		dropInstall bool
		forge       bool
		reads       int64
		handoff     bool
	}{
		{"ten seconds after acquire's read: the note", 10 * time.Second, false, false, 0, true},
		{"a minute after: a read, which sees the lowered seat count", lockaction.ConfigNoteMaxAge, false, false, 1, false},
		{"no installation note: a read", 10 * time.Second, true, false, 1, false},
		{"a note rewritten without the App's key: a read", 10 * time.Second, false, true, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":2,"runnerSerialization":true}`)
				seedSchema(w, 3)
				a, c := w.NewJob("holder-a", "runner-a"), w.NewJob("holder-c", "runner-c")
				hold(t, a)
				hold(t, c)
				b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "5")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- acquire.Run(ctx, b.Deps()) }()
				time.Sleep(time.Second)
				synctest.Wait()
				require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()), "b waits")

				w.SetConfig(`{"maxHolders":1,"runnerSerialization":true}`)
				if tc.dropInstall {
					require.NoError(t, os.Remove(noteFile(t, a, "installation-")))
				}
				if tc.forge {
					// A build step raises the noted seat count; it cannot
					// recompute the MAC without the App's private key.
					editNote(t, noteFile(t, a, "config-"), func(note map[string]any) {
						note["content"] = []byte(`{"maxHolders":9,"runnerSerialization":true}`)
					})
				}
				time.Sleep(tc.after - time.Second)
				w.Em.ResetMetrics()
				a.Input("resource-cleanup-status", "confirmed")
				require.NoError(t, rel(a))
				assert.Equal(t, "true", a.Outputs()["released"])
				assert.Equal(t, tc.reads, w.Em.Metrics().Paths[configGET].Requests)
				s := w.State()
				if tc.handoff {
					assert.Contains(t, a.Out.String(), "Using the lock config this job's acquire read 10s ago.")
					require.Len(t, s.Holders, 2, "the noted config's two seats: the freed one is handed to b")
					assert.Equal(t, 0, lockstate.QueuePosition(s, b.HolderID()))
					require.NoError(t, <-done)
				} else {
					assert.NotContains(t, a.Out.String(), "Using the lock config")
					require.Len(t, s.Holders, 1, "the config read now allows one seat, which c holds")
					assert.Equal(t, 1, lockstate.QueuePosition(s, b.HolderID()), "b still waits")
					// b's acquire ends (cancelled, cleaning up in its
					// RUNNER_TEMP) before the test's temporary
					// directories are removed.
					cancel()
					<-done
				}
			})
		})
	}
}

// noteFile is the one note acquire left for job j whose name starts with
// prefix ("installation-", "config-", "token-") in its RUNNER_TEMP.
func noteFile(t *testing.T, j *actiontest.Job, prefix string) string {
	t.Helper()
	notes, err := filepath.Glob(filepath.Join(j.Env["RUNNER_TEMP"], "ambiguous-build-lock", prefix+"*.json"))
	require.NoError(t, err)
	require.Len(t, notes, 1, "acquire left one %s note", prefix)
	return notes[0]
}

// editNote rewrites the JSON note at path through edit, as a build step
// without the App's key could.
func editNote(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var note map[string]any
	require.NoError(t, json.Unmarshal(data, &note))
	edit(note)
	data, err = json.Marshal(note)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// TestReleaseNeverWritesOnAVersionOlderThanItsAdmission: a job handed its
// seat by another's release learns of it on a later version than the one
// it queued in, and its acquire notes that version's updatedAt in the held
// marker. When its own release then reads a lagging replica serving the
// version before the handoff (the job only queued there), deciding on it
// would remove a queue entry in a compare-and-swap certain to lose: one
// content-creating request more for the writer App's secondary limit. The
// release reads at the branch head instead, and writes once.
func TestReleaseNeverWritesOnAVersionOlderThanItsAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b, done := holderAndWaiter(t, `{"maxHolders":1,"runnerSerialization":true}`, 3)
		time.Sleep(time.Second)
		a.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, rel(a))
		require.NoError(t, <-done)
		require.Equal(t, "true", b.Outputs()["acquired"])
		require.Equal(t, b.HolderID(), w.State().Holders[0].HolderID, "a's release handed b the seat")
		b.ResetFiles()

		// The next state read of b's release is served the version in
		// which b was only queued.
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/" + actiontest.StatePath, Kind: emulator.StaleRead, StaleVersions: 1, Count: 1})
		puts, conflicts := w.Puts(), w.Em.Metrics().Conflicts
		b.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, rel(b))
		assert.Equal(t, "released", b.Outputs()["cleanup-result"])
		assert.Empty(t, w.State().Holders)
		assert.Empty(t, w.State().Queue)
		assert.Equal(t, int64(1), w.Puts()-puts, "one write, decided at the branch head")
		assert.Equal(t, conflicts, w.Em.Metrics().Conflicts, "no compare-and-swap on the older version")
	})
}

// holderAndWaiter is a world at schema with config where job a holds the
// one seat and job b waits behind it at position 1; done receives b's
// acquire result. Call it inside a synctest bubble.
func holderAndWaiter(t *testing.T, config string, schema int) (w *actiontest.World, a, b *actiontest.Job, done chan error) {
	t.Helper()
	w = actiontest.NewWorld(t, config)
	seedSchema(w, schema)
	a = w.NewJob("holder", "runner-a")
	hold(t, a)
	b = w.NewJob("waiter", "runner-b").Input("timeout-minutes", "5")
	done = make(chan error, 1)
	go func() { done <- acquire.Run(context.Background(), b.Deps()) }()
	time.Sleep(time.Second)
	synctest.Wait()
	require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()), "b waits")
	return w, a, b, done
}

// TestReleaseLogsTheHoldFromItsNotice (docs/performance.md §15): a job
// handed its seat holds it from the moment its acquire noticed, not from
// the handoff that stamped its acquiredAt; its release logs that hold in
// recentHolds, the pace far waiters poll by, so the time the seat sat
// unnoticed does not lengthen their sleeps. A release with no admission
// marker of its job logs nothing.
func TestReleaseLogsTheHoldFromItsNotice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b, done := holderAndWaiter(t, `{"maxHolders":1,"runnerSerialization":true}`, 3)
		time.Sleep(7 * time.Second)
		a.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, rel(a))
		require.Len(t, w.State().RecentHolds, 1, "a's release logged its hold")
		assert.InDelta(t, 8000, w.State().RecentHolds[0].HeldMs, 100, "a held from its acquire's notice to its release")
		require.NoError(t, <-done)
		noticed := time.Now()
		require.Equal(t, "true", b.Outputs()["acquired"])
		handedAt, ok := lockstate.ParseTime(w.State().Holders[0].AcquiredAt)
		require.True(t, ok)
		b.ResetFiles()

		time.Sleep(5 * time.Second)
		b.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, rel(b))
		holds := w.State().RecentHolds
		require.Len(t, holds, 2)
		got := time.Duration(holds[1].HeldMs) * time.Millisecond
		assert.InDelta(t, float64(time.Since(noticed)), float64(got), float64(100*time.Millisecond), "b's hold runs from its notice")
		assert.Less(t, got, time.Since(handedAt), "not from the handoff that stamped acquiredAt")

		c := w.NewJob("stranger", "runner-c")
		hold(t, c)
		c.ResetFiles()
		require.NoError(t, os.RemoveAll(filepath.Join(c.Env["RUNNER_TEMP"], "ambiguous-build-lock")))
		c.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, rel(c))
		assert.Len(t, w.State().RecentHolds, 2, "no marker, no logged hold")
	})
}

// TestALostReleaseRaceIsNotLoggedAsHold (docs/performance.md §17): the hold
// a release logs ends where its release started, not at the round that
// landed. A release whose first write lost its race (here to a lagging
// read) logged its retries as seat use, and during a burst's paced joins a
// 5 s hold was logged as 16 s: waiters paced by it slept through the seats
// handed to them.
func TestALostReleaseRaceIsNotLoggedAsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, _, done := holderAndWaiter(t, `{"maxHolders":1,"runnerSerialization":true}`, 3)
		time.Sleep(7 * time.Second)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/" + actiontest.StatePath, Kind: emulator.StaleRead, StaleVersions: 1, Count: 1})
		a.Input("resource-cleanup-status", "confirmed")
		started := time.Now()
		require.NoError(t, rel(a))
		require.Greater(t, time.Since(started), time.Second, "the release's first write lost its race and waited a conflict delay")
		require.Len(t, w.State().RecentHolds, 1)
		assert.InDelta(t, 8000, w.State().RecentHolds[0].HeldMs, 100, "a held from its notice to its release's start")
		require.NoError(t, <-done)
	})
}
