package ghsource_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// planter writes on top of a generated history: legitimate transitions of
// the core, and planted faults that bypass it.
type planter struct {
	t   *testing.T
	w   *histgen.World
	cfg lockstate.Config
	n   int
}

func newPlanter(t *testing.T, seed uint64) *planter {
	w, _ := generate(t, histgen.Options{Seed: seed, Jobs: 16})
	return &planter{t: t, w: w, cfg: w.Config(2)}
}

func (p *planter) identity(name string) lockstate.Identity {
	p.n++
	run := strconv.Itoa(880000 + p.n)
	repo := "example-org/planted"
	return lockstate.Identity{HolderID: repo + ":" + run + ":" + name + ":default", Repository: repo, Workflow: "Unity build", Job: name,
		RunID: run, RunAttempt: "1", RunURL: histgen.ServerURL + "/" + repo + "/actions/runs/" + run, RunnerID: "planted-" + name, QueuedAt: p.w.Clock.Now()}
}

// write commits mutate's result with token ("" = the writer App) and
// returns the new commit.
func (p *planter) write(token, message string, mutate func(s *lockstate.State, now time.Time)) string {
	p.t.Helper()
	p.w.Clock.Advance(time.Minute)
	st, err := p.w.Store(context.Background(), token)
	require.NoError(p.t, err)
	_, err = st.Load(context.Background())
	require.NoError(p.t, err)
	res, err := st.Update(context.Background(), message, func(s *lockstate.State) error {
		mutate(s, p.w.Clock.Now())
		return nil
	})
	require.NoError(p.t, err)
	require.True(p.t, res.Written)
	head, _ := p.w.Emulator.BranchHead(histgen.Owner, histgen.Repo, histgen.Branch)
	return head
}

// acquire is a legitimate acquire under the lock's config, with the
// outcome want ("" = any that writes).
func (p *planter) acquire(token string, id lockstate.Identity, want lockstate.AcquireOutcome) string {
	return p.write(token, "Acquire "+histgen.Lock, func(s *lockstate.State, now time.Time) {
		next, dec, err := lockstate.Acquire(s, p.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, now)
		require.NoError(p.t, err)
		if want != "" {
			require.Equal(p.t, want, dec.Outcome)
		}
		require.True(p.t, dec.Changed)
		*s = *next
	})
}

func (p *planter) release(id lockstate.Identity) string {
	return p.write("", "Release "+histgen.Lock, func(s *lockstate.State, now time.Time) {
		next, _, err := lockstate.Cleanup(s, p.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
			Report: lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}}, now)
		require.NoError(p.t, err)
		*s = *next
	})
}

// caught verifies and requires the first violation to be rule at commit.
func (p *planter) caught(rule history.Rule, commit string) *history.Result {
	p.t.Helper()
	_, res := verify(p.t, options(p.t, p.w), nil)
	require.Equal(p.t, history.StatusViolations, res.Status)
	require.NotNil(p.t, res.FirstViolation)
	assert.Equal(p.t, rule, res.FirstViolation.Rule, res.FirstViolation.Detail)
	assert.Equal(p.t, commit, res.FirstViolation.Commit)
	assert.NotEmpty(p.t, res.FirstViolation.Before)
	assert.NotEmpty(p.t, res.FirstViolation.After)
	return res
}

// TestPlantedOverAdmission: one write admits three jobs into a two-seat
// lock (the core run with 64 seats: a valid document, tokens and all).
func TestPlantedOverAdmission(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 11)
	wide := p.cfg
	wide.MaxHolders = 64
	commit := p.write("", "Acquire "+histgen.Lock, func(s *lockstate.State, now time.Time) {
		for _, name := range []string{"a", "b", "c"} {
			next, dec, err := lockstate.Acquire(s, wide, lockstate.AcquireRequest{Identity: p.identity(name), Lease: time.Hour}, now)
			require.NoError(t, err)
			require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
			*s = *next
		}
	})
	res := p.caught(history.RuleOverCapacity, commit)
	assert.Contains(t, res.FirstViolation.Detail, "above maxHolders 2")
}

// TestPlantedSkippedFIFOEntry: with one seat free and two waiters, the
// second waiter is admitted.
func TestPlantedSkippedFIFOEntry(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 12)
	a, b, c, d := p.identity("a"), p.identity("b"), p.identity("c"), p.identity("d")
	p.acquire("", a, lockstate.OutcomeAdmitted)
	p.acquire("", b, lockstate.OutcomeAdmitted)
	p.acquire("", c, lockstate.OutcomeQueued)
	p.acquire("", d, lockstate.OutcomeQueued)
	p.release(a)
	commit := p.write("", "Acquire "+histgen.Lock, func(s *lockstate.State, now time.Time) {
		e := s.Queue[1]
		require.Equal(t, d.HolderID, e.HolderID)
		s.Queue = s.Queue[:1]
		s.FencingToken++
		s.Holders = append(s.Holders, lockstate.Holder{Entry: e, AcquiredAt: lockstate.FormatTime(now), ExpiresAt: lockstate.FormatTime(now.Add(time.Hour)), FencingToken: s.FencingToken})
		s.Holders[len(s.Holders)-1].Overtakes = 0
	})
	res := p.caught(history.RuleFIFOSkipped, commit)
	assert.Contains(t, res.FirstViolation.Detail, "queue position 2")
}

// TestPlantedReusedFencingToken: an admission is stamped with the first
// token ever issued and the counter is left as it was.
func TestPlantedReusedFencingToken(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 13)
	commit := p.write("", "Acquire "+histgen.Lock, func(s *lockstate.State, now time.Time) {
		next, dec, err := lockstate.Acquire(s, p.cfg, lockstate.AcquireRequest{Identity: p.identity("a"), Lease: time.Hour}, now)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
		next.FencingToken--
		next.Holders[len(next.Holders)-1].FencingToken = 1
		*s = *next
	})
	res := p.caught(history.RuleFencingToken, commit)
	assert.Contains(t, res.FirstViolation.Detail, "reused token")
}

// TestPlantedForeignAuthor: a correct transition committed by an account
// that is neither the writer App nor (for a non-recovery write) an
// operator.
func TestPlantedForeignAuthor(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 14)
	commit := p.acquire(p.w.IntruderToken(), p.identity("a"), lockstate.OutcomeAdmitted)
	res := p.caught(history.RuleForeignAuthor, commit)
	assert.Contains(t, res.FirstViolation.Detail, histgen.IntruderLogin)
	assert.Equal(t, 1, res.Violations())

	// The operator may recover, but not acquire.
	op := p.acquire(p.w.OperatorToken(), p.identity("b"), lockstate.OutcomeAdmitted)
	_, res = verify(t, options(t, p.w), nil)
	require.Len(t, res.Findings, 2)
	assert.Equal(t, op, res.Findings[1].Commit)
	assert.Equal(t, history.RuleForeignAuthor, res.Findings[1].Rule)
}

// TestPlantedPushAsTheWriter: someone with push access commits a legal
// looking state with the writer App's noreply address, so GitHub lists the
// writer as the author, but the commit has no GitHub signature (only the
// App's own Contents API writes are signed). Caught as unsigned-writer;
// --allow-unsigned-writer (GitHub Enterprise Server without web commit
// signing) accepts it.
func TestPlantedPushAsTheWriter(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 15)
	st, err := p.w.Store(context.Background(), "")
	require.NoError(t, err)
	snap, err := st.Load(context.Background())
	require.NoError(t, err)
	p.w.Clock.Advance(time.Minute)
	next, dec, err := lockstate.Acquire(snap.State, p.cfg, lockstate.AcquireRequest{Identity: p.identity("pushed"), Lease: time.Hour}, p.w.Clock.Now())
	require.NoError(t, err)
	require.True(t, dec.Changed)
	next.UpdatedAt = lockstate.FormatTime(p.w.Clock.Now())
	data, err := lockstate.Encode(next)
	require.NoError(t, err)
	_, err = p.w.Emulator.PushFileAs(histgen.Owner, histgen.Repo, histgen.Branch, "locks/"+histgen.Lock+".json", data, histgen.WriterLogin)
	require.NoError(t, err)
	head, _ := p.w.Emulator.BranchHead(histgen.Owner, histgen.Repo, histgen.Branch)
	res := p.caught(history.RuleUnsignedWriter, head)
	assert.Contains(t, res.FirstViolation.Detail, histgen.WriterLogin)

	l, err := ghsource.Load(context.Background(), options(t, p.w), nil)
	require.NoError(t, err)
	in := l.Input
	in.ServerURL, in.Writers, in.Operators = histgen.ServerURL, []string{histgen.WriterLogin}, []string{histgen.OperatorLogin}
	in.AllowUnsignedWriters = true
	assert.Equal(t, history.StatusClean, history.Verify(in).Status, "accepted where GitHub does not sign")
}

// TestPlantedRewrittenBranch: after a verified run, the branch is
// force-pushed back three versions and rewritten; the next run names the
// first commit that is gone. Acknowledging it re-verifies the new chain
// and starts the checkpoint over.
func TestPlantedRewrittenBranch(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 15)
	o := options(t, p.w)
	_, res := verify(t, o, nil)
	require.True(t, res.OK(), "%+v", res.FirstViolation)
	cp := history.NextCheckpoint(nil, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, p.w.Clock.Now())

	hist := p.w.Emulator.History(histgen.Owner, histgen.Repo, histgen.Branch, histgen.StatePath)
	keep := hist[len(hist)-4]
	gone := hist[len(hist)-3]
	forcePush(t, p, keep.CommitSHA)
	p.acquire("", p.identity("a"), "")
	p.acquire("", p.identity("b"), "")

	l, res := verify(t, o, cp)
	require.NotNil(t, l.Input.Listed, "the checkpoint's head is gone: the whole history is listed")
	require.Equal(t, history.StatusViolations, res.Status)
	assert.Equal(t, history.RuleRewritten, res.FirstViolation.Rule)
	assert.Equal(t, gone.CommitSHA, res.FirstViolation.Commit)
	assert.Contains(t, res.FirstViolation.Detail, keep.CommitSHA)
	assert.Equal(t, string(hist[len(hist)-1].Content), res.FirstViolation.Before)
	assert.Empty(t, res.Verified, "an unacknowledged rewrite keeps the old checkpoint")
	assert.Nil(t, history.NextCheckpoint(nil, res, "", "", time.Time{}))

	_, res = verify(t, o, cp, gone.CommitSHA)
	require.Equal(t, history.StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.True(t, res.Rebased)
	next := history.NextCheckpoint(cp, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, p.w.Clock.Now())
	assert.NotContains(t, next.Recent, gone.CommitSHA)
	_, res = verify(t, o, next)
	assert.True(t, res.OK())
	assert.Zero(t, res.Commits)
}

// forcePush moves the state branch to sha, as `git push --force` would.
func forcePush(t *testing.T, p *planter, sha string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, "https://api.github.com/repos/"+histgen.Owner+"/"+histgen.Repo+"/git/refs/heads/"+histgen.Branch,
		stringsReader(fmt.Sprintf(`{"sha":%q,"force":true}`, sha)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+p.w.IntruderToken())
	req.Header.Set("User-Agent", "test")
	resp, err := p.w.Emulator.Transport().RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_ = resp.Body.Close()
}

// TestAcknowledgedFindingPasses: an operator who accepted the findings at
// a commit gets a clean run whose checkpoint moves past it.
func TestAcknowledgedFindingPasses(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 16)
	commit := p.acquire(p.w.IntruderToken(), p.identity("a"), lockstate.OutcomeAdmitted)
	_, res := verify(t, options(t, p.w), nil, commit)
	assert.Equal(t, history.StatusClean, res.Status)
	require.Len(t, res.Findings, 1)
	assert.True(t, res.Findings[0].Acknowledged)
	assert.Equal(t, commit, res.Verified[len(res.Verified)-1].SHA)
}

// TestViolationHoldsTheCheckpoint: the checkpoint advances only up to the
// commit before the first violation, so every later run reports it again.
func TestViolationHoldsTheCheckpoint(t *testing.T) {
	t.Parallel()
	p := newPlanter(t, 17)
	before, _ := p.w.Emulator.BranchHead(histgen.Owner, histgen.Repo, histgen.Branch)
	p.acquire(p.w.IntruderToken(), p.identity("a"), lockstate.OutcomeAdmitted)
	p.acquire("", p.identity("b"), lockstate.OutcomeAdmitted)
	_, res := verify(t, options(t, p.w), nil)
	require.Equal(t, history.StatusViolations, res.Status)
	cp := history.NextCheckpoint(nil, res, histgen.Owner+"/"+histgen.Repo, histgen.Branch, p.w.Clock.Now())
	assert.Equal(t, before, cp.Head.SHA)
	_, again := verify(t, options(t, p.w), cp)
	assert.Equal(t, history.StatusViolations, again.Status)
	assert.Equal(t, res.FirstViolation.Commit, again.FirstViolation.Commit)
	assert.Equal(t, 2, again.Commits)
}
