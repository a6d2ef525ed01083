package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockConfig is the lock config committed on the default branch: two
// seats, runner serialization, no release cooldown.
const lockConfig = `{"maxHolders":2,"runnerSerialization":true,"releaseCooldownSeconds":0}` + "\n"

const maxHolders = 2

var (
	blobSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)
	digits  = regexp.MustCompile(`^[0-9]+$`)
)

// acquireWith is the with: of the consumer's acquire step.
func (j *job) acquireWith() map[string]string {
	return map[string]string{
		"lock-name":       lockName,
		"runner-id":       j.runner, // ${{ runner.name }}
		"github-token":    j.token,  // ${{ github.token }}
		"poll-seconds":    "1",
		"timeout-minutes": "5",
	}
}

// releaseWith is the with: of the consumer's release step: the licensed
// step returned its seat and says so.
func (j *job) releaseWith() map[string]string {
	return map[string]string{
		"lock-name":               lockName,
		"runner-id":               j.runner,
		"resource-cleanup-status": "confirmed",
		"resource-health":         "healthy",
		"resource-reason":         "cleanup-confirmed",
	}
}

// jobRun is what one job did: its three steps and when its licensed step
// ran, as seen by the test.
type jobRun struct {
	j                     *job
	acquire, hold, rel    *step
	holdStart, holdEnd    time.Time
	err                   error
	acquireOut, relOutput map[string]string
}

// acquireHoldRelease runs the consumer pattern on one job: acquire, the
// licensed step only when acquired == 'true', release with if: always().
// It runs on its own goroutine and never touches testing.T.
func acquireHoldRelease(ctx context.Context, j *job, hold time.Duration) *jobRun {
	r := &jobRun{j: j}
	acq, err := j.uses(ctx, "acquire", "acquire-build-lock", j.acquireWith(), j.secrets())
	if err != nil {
		r.err = err
		return r
	}
	r.acquire = acq.wait()
	r.acquireOut = acq.outputs()
	if r.acquireOut["acquired"] == "true" {
		r.holdStart = time.Now()
		h, err := j.runStep(ctx, "licensed", map[string]string{envHoldFor: hold.String()})
		if err != nil {
			r.err = err
			return r
		}
		r.hold = h.wait()
		r.holdEnd = time.Now()
	}
	j.w.remove(j.holderID())
	rel, err := j.uses(ctx, "release", "release-build-lock", j.releaseWith(), j.secrets())
	if err != nil {
		r.err = err
		return r
	}
	r.rel = rel.wait()
	r.relOutput = rel.outputs()
	return r
}

// TestProcessJobsShareTwoSeatsFairly runs eight jobs on four self-hosted
// runners, all at once, each as real acquire, licensed-step and release
// processes, against two seats with runner serialization.
func TestProcessJobsShareTwoSeatsFairly(t *testing.T) {
	t.Parallel()
	w := newWorld(t, lockConfig)
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()

	const jobs, runners = 8, 4
	var all []*job
	for i := range jobs {
		all = append(all, w.newJob(fmt.Sprintf("unity-runner-%d", i%runners+1)))
	}
	start := time.Now()
	runs := make([]*jobRun, jobs)
	var wg sync.WaitGroup
	for i, j := range all {
		wg.Go(func() { runs[i] = acquireHoldRelease(ctx, j, time.Second) })
	}
	wg.Wait()
	t.Logf("%d jobs acquired, held and released in %s", jobs, time.Since(start).Round(time.Millisecond))

	for _, r := range runs {
		checkAcquiredAndReleased(t, w, r)
	}
	if t.Failed() {
		return
	}
	rep, states := w.check(maxHolders)
	assert.Empty(t, rep.Violations, "checker")
	assert.False(t, rep.MaxOccupied > maxHolders || rep.MaxOccupied < 1, "max occupied %d, want 1..%d", rep.MaxOccupied, maxHolders)
	admitted := map[string]int{}
	for _, a := range rep.Admissions {
		admitted[a.HolderID]++
	}
	for _, j := range all {
		assert.Equal(t, 1, admitted[j.holderID()], "%s admitted %d times, want exactly once", j.holderID(), admitted[j.holderID()])
	}
	checkRunnerSerialization(t, states)
	checkHoldIntervals(t, runs)
	checkJobIDs(t, states, all)
	checkFencingTokens(t, states, runs)
	if final := w.latest(); assert.NotNil(t, final, "final state") {
		assert.Empty(t, final.Holders, "final holders")
		assert.Empty(t, final.Queue, "final queue")
		assert.Empty(t, final.Reservations, "final reservations")
	}
	checkNoSecrets(t, w)
	t.Logf("%d state versions, max occupied %d of %d, schema %d", rep.Versions, rep.MaxOccupied, maxHolders, states[len(states)-1].SchemaVersion)
}

// TestProcessKilledHolderStaysAndTerminatedWaiterLeaves kills one job with
// SIGKILL while it holds a seat (its runner died: no release ever runs) and
// sends SIGTERM to another while it waits in the queue.
func TestProcessKilledHolderStaysAndTerminatedWaiterLeaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t, lockConfig)
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	gate := filepath.Join(t.TempDir(), "licensed-work-done")
	never := filepath.Join(t.TempDir(), "never")

	killed := w.newJob("unity-runner-1")
	blocker := w.newJob("unity-runner-2")
	waiter := w.newJob("unity-runner-3")
	later := w.newJob("unity-runner-4")

	// 1. The killed job takes a seat and dies in its licensed step.
	acq := mustStep(t)(killed.uses(ctx, "acquire", "acquire-build-lock", killed.acquireWith(), killed.secrets())).wait()
	requireAcquired(t, killed, acq)
	hold := mustStep(t)(killed.runStep(ctx, "licensed", map[string]string{envHoldUntil: never}))
	waitFor(t, "the killed job's licensed step to start", func() bool {
		return strings.Contains(hold.stdout.String(), "licensed work started")
	})
	require.NoError(t, hold.signal(syscall.SIGKILL))
	hold.wait()
	require.True(t, hold.killedBy(syscall.SIGKILL), "licensed step was not killed by SIGKILL:\n%s", hold.log())

	// 2. The blocker takes the second seat and keeps working.
	acq = mustStep(t)(blocker.uses(ctx, "acquire", "acquire-build-lock", blocker.acquireWith(), blocker.secrets())).wait()
	requireAcquired(t, blocker, acq)
	blockerHold := mustStep(t)(blocker.runStep(ctx, "licensed", map[string]string{envHoldUntil: gate}))

	// 3. The waiter queues, then the runner cancels it with SIGTERM.
	wait := mustStep(t)(waiter.uses(ctx, "acquire", "acquire-build-lock", waiter.acquireWith(), waiter.secrets()))
	waitFor(t, "the waiter's queue entry", func() bool {
		select {
		case <-wait.done:
			require.Fail(t, "the waiter exited while it should wait:\n"+wait.log())
		default:
		}
		s := w.latest()
		return s != nil && lockstate.QueuePosition(s, waiter.holderID()) > 0
	})
	w.remove(waiter.holderID())
	require.NoError(t, wait.signal(syscall.SIGTERM))
	require.Equal(t, 143, wait.wait().exitCode(), "waiter exit code %d after SIGTERM, want 143:\n%s", wait.exitCode(), wait.log())
	assert.Equal(t, "false", wait.outputs()["acquired"], "a cancelled acquire reports acquired=false")
	assert.Equal(t, "cancelled", wait.outputs()["admission-result"])
	assert.Contains(t, wait.stdout.String(), "Received SIGTERM", "the waiter did not report the SIGTERM:\n%s", wait.log())
	// Nothing else wrote since: the entry was removed by the waiter itself,
	// inside its SIGTERM window, before it exited.
	s := w.latest()
	assert.False(t, containsID(s, waiter.holderID()), "the cancelled waiter is still in the state after its exit: %+v\nwaiter log:\n%s", s, wait.log())
	assert.Len(t, s.Holders, 2, "holders after the cancellation: %+v, want the killed job and the blocker", s.Holders)

	// 4. The blocker finishes and releases; a later job still gets the one
	// seat the killed holder left.
	writeFile(t, gate, "done\n")
	require.Equal(t, 0, blockerHold.wait().exitCode(), "blocker's licensed step failed:\n%s", blockerHold.log())
	w.remove(blocker.holderID())
	rel := mustStep(t)(blocker.uses(ctx, "release", "release-build-lock", blocker.releaseWith(), blocker.secrets())).wait()
	requireReleased(t, blocker, rel)
	checkAcquiredAndReleased(t, w, acquireHoldRelease(ctx, later, 200*time.Millisecond))

	// 5. Final state: only the killed job's holder entry remains, for the
	// reaper to quarantine or free later.
	final := w.latest()
	assert.False(t, final == nil || len(final.Holders) != 1 || final.Holders[0].HolderID != killed.holderID(), "final holders %+v, want only the killed job %s", final.Holders, killed.holderID())
	assert.Len(t, final.Queue, 0, "final queue %+v, want empty", final.Queue)
	assert.False(t, containsID(final, waiter.holderID()), "the cancelled waiter is in the final state")
	rep, states := w.check(maxHolders)
	assert.Empty(t, rep.Violations, "checker")
	checkRunnerSerialization(t, states)
	checkNoSecrets(t, w)
}

// mustStep adapts (step, error) for the test goroutine.
func mustStep(t *testing.T) func(*step, error) *step {
	return func(s *step, err error) *step {
		t.Helper()
		require.NoError(t, err)
		return s
	}
}

func requireAcquired(t *testing.T, j *job, s *step) {
	t.Helper()
	require.False(t, s.exitCode() != 0 || s.outputs()["acquired"] != "true", "%s did not acquire (outputs %v):\n%s", j.holderID(), s.outputs(), s.log())
}

func requireReleased(t *testing.T, j *job, s *step) {
	t.Helper()
	out := s.outputs()
	require.False(t, s.exitCode() != 0 || out["released"] != "true" || out["cleanup-result"] != "released", "%s did not release (outputs %v):\n%s", j.holderID(), out, s.log())
}

// waitFor polls cond every 100 ms for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting for %s", what)
		time.Sleep(100 * time.Millisecond)
	}
}

func containsID(s *lockstate.State, id string) bool {
	if s == nil {
		return false
	}
	for _, h := range s.Holders {
		if h.HolderID == id {
			return true
		}
	}
	return lockstate.QueuePosition(s, id) > 0
}

// checkAcquiredAndReleased checks every exit code and output of one job.
func checkAcquiredAndReleased(t *testing.T, w *world, r *jobRun) {
	t.Helper()
	id := r.j.holderID()
	if r.err != nil {
		acqLog := "(acquire did not start)"
		if r.acquire != nil {
			acqLog = r.acquire.log()
		}
		assert.NoError(t, r.err, "%s; acquire output %v\nacquire log:\n%s", id, r.acquireOut, acqLog)
		return
	}
	if !assert.Equal(t, 0, r.acquire.exitCode(), "%s: acquire exit %d\n%s", id, r.acquire.exitCode(), r.acquire.log()) {
		return
	}
	out := r.acquireOut
	want := map[string]string{
		"acquired": "true", "admission-result": "acquired", "lock-name": lockName, "holder-id": id,
		"stale-recovered": "false", "quarantine-recovered": "false", "incident-id": "",
		"resource-health": "healthy", "resource-reason": "",
	}
	for k, v := range want {
		if assert.Contains(t, out, k, "%s: acquire output %s", id, k) {
			assert.Equal(t, v, out[k], "%s: acquire output %s", id, k)
		}
	}
	if assert.Regexp(t, blobSHA, out["state-sha"], "%s: acquire state-sha", id) {
		s := w.stateBySHA(out["state-sha"])
		assert.True(t, s != nil && slices.ContainsFunc(s.Holders, func(h lockstate.Holder) bool { return h.HolderID == id }),
			"%s: state-sha %s is not a committed state holding this job", id, out["state-sha"])
	}
	for _, k := range []string{"wait-ms", "attempts"} {
		assert.True(t, digits.MatchString(out[k]), "%s: acquire output %s=%q is not a count", id, k, out[k])
	}
	assert.Contains(t, out, "fencing-token", "%s: acquire wrote no fencing-token output", id)
	assert.False(t, r.hold == nil || r.hold.exitCode() != 0, "%s: licensed step did not run or failed", id)
	if !assert.NotNil(t, r.rel, "%s: release did not run", id) {
		return
	}
	if !assert.Equal(t, 0, r.rel.exitCode(), "%s: release exit %d\n%s", id, r.rel.exitCode(), r.rel.log()) {
		return
	}
	rel := r.relOutput
	wantRel := map[string]string{
		"released": "true", "queue-cleaned": "false", "cleanup-result": "released", "lock-name": lockName, "holder-id": id,
		"reservation-id": "", "reservation-state": "", "incident-id": "", "resource-health": "healthy",
		"resource-reason": "cleanup-confirmed", "report-degraded": "false", "report-validation-error": "",
	}
	for k, v := range wantRel {
		if assert.Contains(t, rel, k, "%s: release output %s", id, k) {
			assert.Equal(t, v, rel[k], "%s: release output %s", id, k)
		}
	}
	if assert.Regexp(t, blobSHA, rel["state-sha"], "%s: release state-sha", id) {
		s := w.stateBySHA(rel["state-sha"])
		assert.True(t, s != nil && !containsID(s, id), "%s: release state-sha %s is not a committed state without this job", id, rel["state-sha"])
	}
}

// checkRunnerSerialization: no committed version has two holders (or a
// holder and a reservation) on one runner.
func checkRunnerSerialization(t *testing.T, states []*lockstate.State) {
	t.Helper()
	for i, s := range states {
		if s == nil {
			continue
		}
		seen := map[string]bool{}
		for _, h := range s.Holders {
			assert.False(t, seen[h.RunnerID], "version %d: two holders on runner %s: %+v", i, h.RunnerID, s.Holders)
			seen[h.RunnerID] = true
		}
	}
}

// checkHoldIntervals checks mutual exclusion where it matters, on the
// licensed steps as the test observed them: at most maxHolders run at
// once, and never two on one runner. Each interval lies inside its job's
// holding (it starts after acquire exited admitted and ends before release
// started), so this follows from a correct lock whatever the timing.
func checkHoldIntervals(t *testing.T, runs []*jobRun) {
	t.Helper()
	type event struct {
		at     time.Time
		delta  int
		runner string
	}
	var evs []event
	for _, r := range runs {
		if r.holdStart.IsZero() || r.holdEnd.IsZero() {
			continue
		}
		evs = append(evs, event{r.holdStart, +1, r.j.runner}, event{r.holdEnd, -1, r.j.runner})
	}
	sort.SliceStable(evs, func(a, b int) bool {
		if evs[a].at.Equal(evs[b].at) {
			return evs[a].delta < evs[b].delta // ends before starts at the same instant
		}
		return evs[a].at.Before(evs[b].at)
	})
	running, peak := 0, 0
	perRunner := map[string]int{}
	for _, e := range evs {
		running += e.delta
		perRunner[e.runner] += e.delta
		peak = max(peak, running)
		assert.False(t, perRunner[e.runner] > 1, "two licensed steps ran at once on runner %s", e.runner)
	}
	assert.False(t, peak > maxHolders, "%d licensed steps ran at once, limit %d", peak, maxHolders)
}

// checkJobIDs: every holder entry carries the exact numeric job id acquire
// resolved with the job's GITHUB_TOKEN (one active job on the runner).
func checkJobIDs(t *testing.T, states []*lockstate.State, jobs []*job) {
	t.Helper()
	want := map[string]string{}
	for _, j := range jobs {
		want[j.holderID()] = strconv.FormatInt(j.jobID, 10)
	}
	for i, s := range states {
		if s == nil {
			continue
		}
		for _, h := range s.Holders {
			if w, ok := want[h.HolderID]; ok {
				assert.Equal(t, w, h.JobID, "version %d: holder %s jobId", i, h.HolderID)
			}
		}
	}
}

// checkFencingTokens: the fencing-token output is the holder's token once
// the state schema has fencing (6+), distinct per admission; before that
// it is empty (or "0").
func checkFencingTokens(t *testing.T, states []*lockstate.State, runs []*jobRun) {
	t.Helper()
	schema := 0
	for _, s := range states {
		if s != nil {
			schema = max(schema, s.SchemaVersion)
		}
	}
	seen := map[string]string{}
	for _, r := range runs {
		tok := r.acquireOut["fencing-token"]
		if schema < lockstate.FencedSchemaVersion {
			assert.False(t, tok != "" && tok != "0" && !digits.MatchString(tok), "%s: fencing-token %q", r.j.holderID(), tok)
			continue
		}
		if n, err := strconv.ParseInt(tok, 10, 64); !assert.True(t, err == nil && n > 0, "%s: fencing-token %q at schema %d, want a positive integer", r.j.holderID(), tok, schema) {
			continue
		}
		assert.NotContains(t, seen, tok, "fencing-token %s issued to both %s and %s", tok, seen[tok], r.j.holderID())
		seen[tok] = r.j.holderID()
	}
}

// checkNoSecrets: no step printed (outside ::add-mask::) or wrote to its
// output, state or summary file the App private key, a PEM header or any
// ghs_ token, and no state version stores one.
func checkNoSecrets(t *testing.T, w *world) {
	t.Helper()
	needles := []string{"-----BEGIN", "ghs_"}
	for _, line := range strings.Split(w.em.key, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			needles = append(needles, line)
		}
	}
	w.mu.Lock()
	jobs := slices.Clone(w.jobs)
	w.mu.Unlock()
	steps := 0
	for _, j := range jobs {
		j.mu.Lock()
		all := slices.Clone(j.steps)
		j.mu.Unlock()
		for _, s := range all {
			steps++
			vis := s.visible()
			for _, n := range needles {
				assert.NotContains(t, vis, n, "%s leaked a secret (%.12s…) into its log or files", s.name, n)
			}
		}
	}
	for _, v := range w.em.history(stateBranch, "locks/"+lockName+".json") {
		for _, n := range needles {
			assert.NotContains(t, string(v.Content), n, "state version %s stores a secret (%.12s…)", v.CommitSHA, n)
		}
	}
	assert.NotZero(t, steps, "no steps to check for secrets")
}
