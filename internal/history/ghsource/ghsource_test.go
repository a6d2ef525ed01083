package ghsource_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
)

// busy is a history that exercises every recognized transition: joins and
// admissions (with the 5 → 6 migration), clean releases with a cooldown,
// unproven releases (quarantines the operator recovers), same-runner
// reclaims, jobs that die holding their seat (reaper quarantines), waiters
// that give up, an account incident and its recovery, and a maxHolders
// change in the config history.
func busy(seed uint64, jobs int) histgen.Options {
	return histgen.Options{Seed: seed, Jobs: jobs, Seats: 2, Runners: 5, UnsafeEvery: 9, DeadEvery: 13,
		GiveUpAfter: 20 * time.Minute, IncidentJob: jobs / 3, SeatsChangeAt: jobs / 2, CooldownSeconds: 30, Interarrival: 5 * time.Minute}
}

// TestSimulatedHistoryVerifiesClean: a history of more than 1,000 commits
// produced by the simulation verifies clean through the emulator's REST
// API, every commit explained by a transition of the pure core, within the
// request bound: one commits-list page per 100 commits and one version read
// per commit (each a distinct version), plus the config history and one
// read proving where the file was created.
func TestSimulatedHistoryVerifiesClean(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, busy(1, 420))
	require.GreaterOrEqual(t, truth.Commits, 1000)
	w.Emulator.ResetMetrics()
	l, res := verify(t, options(t, w), nil)
	require.Equal(t, history.StatusClean, res.Status, "first violation: %+v", res.FirstViolation)
	assert.Equal(t, truth.Commits, res.Commits)
	assert.Zero(t, res.Transitions[string(history.KindUnexplained)])
	for _, k := range []history.Kind{history.KindBootstrap, history.KindAcquire, history.KindRelease, history.KindReap, history.KindRecover, history.KindRecoverIncident} {
		assert.Positive(t, res.Transitions[string(k)], "kind %s never exercised", k)
	}
	for _, r := range []string{"admitted", "admitted-migrated", "queued", "reclaimed", "cooldown-started", "quarantined", "queue-cleaned", "global-quarantined",
		"stale-holder-quarantined", "quarantine-recovered", "incident-recovered"} {
		assert.Positive(t, res.Results[r], "result %s never exercised", r)
	}
	assert.True(t, l.Input.StartProven)

	pages := (truth.Commits + ghsource.PerPage - 1) / ghsource.PerPage
	assert.Equal(t, pages, l.Counts.ListPages)
	assert.Equal(t, truth.Commits, l.Counts.VersionReads)
	assert.Equal(t, 1, l.Counts.StartProofReads)
	m := w.Emulator.Metrics()
	assert.Equal(t, int64(pages+l.Counts.ConfigPages), m.Routes["GET /repos/{owner}/{repo}/commits"].Requests)
	assert.Equal(t, int64(l.Counts.VersionReads+l.Counts.StartProofReads+l.Counts.ConfigReads), m.Routes["GET /repos/{owner}/{repo}/contents/{path}"].Requests)
	assert.Equal(t, int64(l.Counts.Total()), m.Requests)
	// Every commit left a distinct version (updatedAt alone differs), and
	// each was read exactly once.
	distinct := map[string]bool{}
	for _, v := range l.Input.Versions {
		distinct[v.BlobSHA] = true
	}
	assert.Len(t, distinct, truth.Commits)
	assert.Equal(t, len(distinct), l.Counts.VersionReads)
}

// TestCheckpointResumesWithNewCommitsOnly: a second run reads only what
// was committed after the first run's checkpoint, with no version of the
// first run read again, and verifies the transition from the checkpoint's
// head.
func TestCheckpointResumesWithNewCommitsOnly(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, histgen.Options{Seed: 3, Jobs: 30})
	o := options(t, w)
	_, res := verify(t, o, nil)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	cp := history.NextCheckpoint(nil, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, w.Clock.Now())
	require.NotNil(t, cp)
	assert.Equal(t, truth.Commits, cp.Commits)
	data, err := cp.Encode()
	require.NoError(t, err)
	cp, err = history.DecodeCheckpoint(data)
	require.NoError(t, err)

	// Nothing new: one list page, no version read.
	l, res := verify(t, o, cp)
	assert.True(t, res.OK())
	assert.Zero(t, res.Commits)
	assert.Equal(t, 1, l.Counts.ListPages)
	assert.Zero(t, l.Counts.VersionReads)

	// Three more writes: exactly three reads.
	appendAcquires(t, w, 3)
	l, res = verify(t, o, cp)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	assert.Equal(t, 3, res.Commits)
	assert.Equal(t, 3, l.Counts.VersionReads)
	next := history.NextCheckpoint(cp, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, w.Clock.Now())
	assert.Equal(t, truth.Commits+3, next.Commits)
	assert.Equal(t, l.Input.Versions[2].SHA, next.Head.SHA)
}

// appendAcquires makes n more writes through the writer: new jobs that
// acquire under the lock's config (admitted or queued).
func appendAcquires(t *testing.T, w *histgen.World, n int) {
	t.Helper()
	st, err := w.Store(context.Background(), "")
	require.NoError(t, err)
	cfg := w.Config(2)
	for i := range n {
		w.Clock.Advance(time.Minute)
		_, err := st.Update(context.Background(), "Acquire "+histgen.Lock, func(s *lockStateAlias) error {
			return acquireExtra(s, cfg, i, w.Clock.Now())
		})
		require.NoError(t, err)
	}
}

// TestUnreadableHistoryFails: a version read that keeps failing, or a
// listing that ends before the file's creation, is a failure, never a pass.
func TestUnreadableHistoryFails(t *testing.T) {
	t.Parallel()
	w, _ := generate(t, histgen.Options{Seed: 4, Jobs: 60})
	o := options(t, w)
	hist := w.Emulator.History(histgen.Owner, histgen.Repo, histgen.Branch, histgen.StatePath)
	id := w.Emulator.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/" + histgen.Owner + "/" + histgen.Repo + "/contents/", Kind: emulator.ServerError, Status: 502})
	_, err := ghsource.Load(context.Background(), o, nil)
	var e *ghsource.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ghsource.CodeUnreadable, e.Code)
	w.Emulator.RemoveFault(id)

	// A listing cut short (a proxy that drops the Link header): the oldest
	// listed commit is not where the file was created.
	o.Client = truncating(t, w)
	l, err := ghsource.Load(context.Background(), o, nil)
	require.NoError(t, err)
	assert.False(t, l.Input.StartProven)
	in := l.Input
	in.Writers = []string{histgen.WriterLogin}
	res := history.Verify(in)
	assert.Equal(t, history.StatusIncomplete, res.Status)
	assert.Contains(t, res.Incomplete, "truncated")
	assert.False(t, res.OK())
	assert.Empty(t, res.Verified, "a truncated history never advances the checkpoint")
	assert.Less(t, len(l.Input.Versions), len(hist))

	// A state file that never existed on the branch is no history at all.
	o = options(t, w)
	o.Lock = "other-lock"
	_, err = ghsource.Load(context.Background(), o, nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ghsource.CodeNoHistory, e.Code)
}

// TestBlobMismatchFails: bytes that do not hash to the blob id the
// response names are refused.
func TestBlobMismatchFails(t *testing.T) {
	t.Parallel()
	w, _ := generate(t, histgen.Options{Seed: 5, Jobs: 6})
	o := options(t, w)
	o.Client = tampering(t, w)
	_, err := ghsource.Load(context.Background(), o, nil)
	var e *ghsource.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ghsource.CodeUnreadable, e.Code)
	assert.Contains(t, err.Error(), "hash to blob")
}

// TestBoundedListing: more pages than MaxPages is refused, not truncated.
func TestBoundedListing(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, histgen.Options{Seed: 6, Jobs: 60})
	require.Greater(t, truth.Commits, 100)
	o := options(t, w)
	o.MaxPages = 1
	_, err := ghsource.Load(context.Background(), o, nil)
	var e *ghsource.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ghsource.CodeBoundExceeded, e.Code)

	// MaxCommits reads the oldest commits and leaves the rest for later.
	o = options(t, w)
	o.MaxCommits = 50
	l, res := verify(t, o, nil)
	assert.Equal(t, 50, len(l.Input.Versions))
	assert.Equal(t, truth.Commits-50, l.Remaining)
	assert.True(t, res.OK())
	assert.Len(t, res.Verified, 50)
}

func TestNoWriteEverHappensWhileReading(t *testing.T) {
	t.Parallel()
	w, _ := generate(t, histgen.Options{Seed: 7, Jobs: 10})
	w.Emulator.ResetMetrics()
	verify(t, options(t, w), nil)
	assert.Zero(t, w.Emulator.Metrics().Writes)
	for route := range w.Emulator.Metrics().Routes {
		assert.True(t, strings.HasPrefix(route, http.MethodGet+" "), route)
	}
}

// TestUnreadableVersionKeepsTheVerifiedPrefix: when one version cannot be
// read (here: every read at one commit fails), the versions before it are
// still verified and the checkpoint advances over them; the run is
// incomplete, never a pass, and the next run continues there.
func TestUnreadableVersionKeepsTheVerifiedPrefix(t *testing.T) {
	t.Parallel()
	w, truth := generate(t, histgen.Options{Seed: 8, Jobs: 20})
	hist := w.Emulator.History(histgen.Owner, histgen.Repo, histgen.Branch, histgen.StatePath)
	broken := hist[10].CommitSHA
	o := options(t, w)
	o.Client = clientWith(t, w, rewriting{base: w.Emulator.Transport(), edit: func(req *http.Request, resp *http.Response) {
		if strings.Contains(req.URL.Path, "/contents/") && req.URL.Query().Get("ref") == broken {
			resp.StatusCode, resp.Status = http.StatusBadGateway, "502 Bad Gateway"
		}
	}})
	l, res := verify(t, o, nil)
	assert.Contains(t, l.Input.Incomplete, "10 of")
	assert.Equal(t, history.StatusIncomplete, res.Status)
	assert.False(t, res.OK())
	require.Len(t, res.Verified, 10)
	cp := history.NextCheckpoint(nil, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, w.Clock.Now())
	assert.Equal(t, hist[9].CommitSHA, cp.Head.SHA)

	_, res = verify(t, options(t, w), cp)
	assert.True(t, res.OK(), "%+v", res.FirstViolation)
	assert.Equal(t, truth.Commits-10, res.Commits)
}
