package history

import (
	"crypto/sha1" //nolint:gosec // test commit ids
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const (
	lockName = "seats"
	writer   = "build-lock-writer[bot]"
	operator = "octo-operator"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func cfg(seats int) lockstate.Config {
	return lockstate.Config{MaxHolders: seats, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true,
		FencedAdmission: true, MaxOvertakes: 2, ReleaseCooldownSeconds: 0}
}

func ident(n int) lockstate.Identity {
	run := strconv.Itoa(100 + n)
	return lockstate.Identity{HolderID: "acme/game:" + run + ":build:default", Repository: "acme/game", Workflow: "ci", Job: "build",
		RunID: run, RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/" + run, RunnerID: fmt.Sprintf("r%d", n)}
}

// hist builds a history one transition at a time through the core.
type hist struct {
	t      *testing.T
	cfg    lockstate.Config
	state  *lockstate.State
	now    time.Time
	vs     []Version
	author string
}

func newHist(t *testing.T, c lockstate.Config) *hist {
	s := lockstate.Empty(lockName)
	s.SchemaVersion, s.Reservations, s.ActiveIncident = 6, []lockstate.Reservation{}, nil
	h := &hist{t: t, cfg: c, now: t0, author: writer}
	h.commit(s, "Bootstrap")
	return h
}

func sha(n int) string {
	b := sha1.Sum([]byte(strconv.Itoa(n))) //nolint:gosec // test ids
	return hex.EncodeToString(b[:])
}

// commit appends s as the next version (the store's updatedAt stamped).
func (h *hist) commit(s *lockstate.State, msg string) string {
	h.t.Helper()
	s = s.Clone()
	s.UpdatedAt = lockstate.FormatTime(h.now)
	data, err := lockstate.Encode(s)
	require.NoError(h.t, err)
	id := sha(len(h.vs) + 1)
	var parents []string
	if len(h.vs) > 0 {
		parents = []string{h.vs[len(h.vs)-1].SHA}
	}
	h.vs = append(h.vs, Version{Commit: Commit{SHA: id, Parents: parents, Time: h.now, AuthorLogin: h.author, Verified: h.author == writer, Message: msg}, BlobSHA: blobSHA(data), Content: data})
	h.state = s
	h.now = h.now.Add(time.Minute)
	return id
}

func (h *hist) acquire(n int) lockstate.AcquireOutcome {
	h.t.Helper()
	id := ident(n)
	id.QueuedAt = h.now
	next, dec, err := lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, h.now)
	require.NoError(h.t, err)
	require.True(h.t, dec.Changed)
	h.commit(next, "Acquire")
	return dec.Outcome
}

func (h *hist) poll(n int) {
	h.t.Helper()
	id := ident(n)
	next, dec, err := lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, h.now)
	require.NoError(h.t, err)
	if dec.Changed {
		h.commit(next, "Acquire")
	}
}

func (h *hist) release(n int, report lockstate.Report) {
	h.t.Helper()
	id := ident(n)
	next, _, err := lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: "1", RunnerID: id.RunnerID,
		Report: report, ReservationID: "res-" + strconv.Itoa(n), Identity: id, ServerURL: lockstate.DefaultServerURL}, h.now)
	require.NoError(h.t, err)
	h.commit(next, "Release")
}

var confirmed = lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}

func (h *hist) input() Input {
	return Input{Lock: lockName, StartProven: true, Versions: h.vs, Writers: []string{writer}, Operators: []string{operator},
		Configs: []ConfigVersion{{SHA: sha(9999), Time: t0.Add(-time.Hour), Config: h.cfg}}}
}

// planted writes s (not produced by the core) as the next version.
func (h *hist) planted(mutate func(s *lockstate.State)) string {
	s := h.state.Clone()
	mutate(s)
	return h.commit(s, "Planted")
}

func TestVerifyCleanHistoryExplainsEveryCommit(t *testing.T) {
	t.Parallel()
	h := newHist(t, cfg(1))
	assert.Equal(t, lockstate.OutcomeAdmitted, h.acquire(1))
	assert.Equal(t, lockstate.OutcomeQueued, h.acquire(2))
	h.release(1, confirmed)
	h.poll(2)
	h.release(2, lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"})
	q := h.state.Reservations[0].ReservationID
	h.author = operator
	next, _, err := lockstate.RecoverQuarantine(h.state, h.cfg, q, h.now)
	require.NoError(t, err)
	h.commit(next, "Recover reservation "+q)

	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.Equal(t, len(h.vs), res.Commits)
	assert.Equal(t, map[string]int{"bootstrap": 1, "acquire": 3, "release": 2, "recover": 1}, res.Transitions)
	assert.Equal(t, 2, res.Results["admitted"])
	assert.Equal(t, 1, res.Results["quarantined"])
	assert.Len(t, res.Verified, len(h.vs))
	for _, s := range res.Steps[1:] {
		assert.False(t, s.Now.IsZero(), "the writer's clock is recovered for %s", s.Kind)
	}
}

// A same-runner reclaim and its pre-activation retraction, which puts the
// consumed quarantine back: explained only with exactly that quarantine.
func TestVerifyReclaimAndRetraction(t *testing.T) {
	t.Parallel()
	h := newHist(t, cfg(1))
	h.acquire(1)
	h.release(1, lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"})
	consumed := h.state.Reservations[0]
	again := ident(3)
	again.RunnerID = ident(1).RunnerID
	again.QueuedAt = h.now
	next, dec, err := lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: again, Lease: time.Hour}, h.now)
	require.NoError(t, err)
	require.True(t, dec.QuarantineRecovered)
	h.commit(next, "Acquire")
	next, _, err = lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: again.HolderID, RunAttempt: "1", RunnerID: again.RunnerID,
		PreActivation: true, RestoreQuarantine: &consumed}, h.now)
	require.NoError(t, err)
	h.commit(next, "Release")
	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.Equal(t, 1, res.Results["reclaimed"])
	assert.Equal(t, 1, res.Results["retracted"])

	// A run that stopped right after the reclaim hands it on in the
	// checkpoint; without that record the restored quarantine is not
	// explained.
	in := h.input()
	in.Versions = in.Versions[:len(in.Versions)-1]
	first := Verify(in)
	require.True(t, first.OK())
	cp := NextCheckpoint(nil, first, "acme/build-lock", "lock-state", h.now)
	require.Contains(t, cp.Reclaimed, again.HolderID)
	data, err := cp.Encode()
	require.NoError(t, err)
	cp, err = DecodeCheckpoint(data)
	require.NoError(t, err)
	in = h.input()
	in.Versions, in.Base, in.Checkpoint = in.Versions[len(in.Versions)-1:], cp.BaseVersion(), cp
	res = Verify(in)
	assert.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	in.Checkpoint = nil
	res = Verify(in)
	assert.Equal(t, RuleUnexplainedTransition, res.FirstViolation.Rule)
}

func TestVerifyRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		build func(h *hist) string
		rule  Rule
	}{
		{"invalid document", func(h *hist) string {
			h.acquire(1)
			data := []byte(`{"schemaVersion":6,"lock":"seats"}`)
			h.vs = append(h.vs, Version{Commit: Commit{SHA: sha(500), Parents: []string{h.vs[len(h.vs)-1].SHA}, Time: h.now, AuthorLogin: writer, Verified: true}, BlobSHA: blobSHA(data), Content: data})
			return sha(500)
		}, RuleInvalidDocument},
		{"state deleted", func(h *hist) string {
			h.acquire(1)
			h.vs = append(h.vs, Version{Commit: Commit{SHA: sha(501), Parents: []string{h.vs[len(h.vs)-1].SHA}, Time: h.now, AuthorLogin: writer, Verified: true}})
			return sha(501)
		}, RuleStateDeleted},
		{"over capacity through a reservation", func(h *hist) string {
			h.acquire(1)
			h.release(1, lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"})
			wide := h.cfg
			wide.MaxHolders = 5
			next, _, err := lockstate.Acquire(h.state, wide, lockstate.AcquireRequest{Identity: ident(2), Lease: time.Hour}, h.now)
			require.NoError(h.t, err)
			return h.commit(next, "Acquire")
		}, RuleOverCapacity},
		{"duplicate identity", func(h *hist) string {
			h.acquire(1)
			return h.planted(func(s *lockstate.State) {
				e := s.Holders[0].Entry
				e.RunnerID = "elsewhere"
				s.Queue = append(s.Queue, e)
			})
		}, RuleDuplicateIdentity},
		{"schema downgrade", func(h *hist) string {
			return h.planted(func(s *lockstate.State) { s.SchemaVersion = 5; s.FencingToken = 0 })
		}, RuleSchemaDowngrade},
		{"fencing counter goes back", func(h *hist) string {
			h.acquire(1)
			h.release(1, confirmed)
			return h.planted(func(s *lockstate.State) { s.FencingToken = 0 })
		}, RuleFencingToken},
		{"fencing counter skips", func(h *hist) string {
			h.acquire(1)
			return h.planted(func(s *lockstate.State) { s.FencingToken += 5 })
		}, RuleFencingToken},
		{"overtakes jump", func(h *hist) string {
			h.acquire(1)
			h.acquire(2)
			return h.planted(func(s *lockstate.State) { s.Queue[0].Overtakes = 2 })
		}, RuleOvertakingBound},
		{"new waiter with overtakes", func(h *hist) string {
			h.acquire(1)
			return h.planted(func(s *lockstate.State) {
				next, _, _ := lockstate.Acquire(s, h.cfg, lockstate.AcquireRequest{Identity: ident(2), Lease: time.Hour}, h.now)
				next.Queue[0].Overtakes = 1
				*s = *next
			})
		}, RuleOvertakingBound},
		{"reap without proof", func(h *hist) string {
			h.acquire(1)
			return h.planted(func(s *lockstate.State) {
				hd := s.Holders[0]
				s.Holders = s.Holders[:0]
				s.Reservations = append(s.Reservations, lockstate.Reservation{ReservationID: "q1", HolderID: hd.HolderID, Repository: hd.Repository,
					Workflow: hd.Workflow, Job: hd.Job, RunID: hd.RunID, RunAttempt: hd.RunAttempt, RunURL: hd.RunURL, RunnerID: hd.RunnerID,
					Reason: lockstate.ReasonReapPrefix + "holder run is in_progress", State: lockstate.ReservationQuarantine, CreatedAt: lockstate.FormatTime(h.now)})
			})
		}, RuleReapWithoutProof},
		{"holder moved to another runner", func(h *hist) string {
			h.acquire(1)
			return h.planted(func(s *lockstate.State) { s.Holders[0].RunnerID = "moved" })
		}, RuleUnexplainedTransition},
		{"merge commit", func(h *hist) string {
			h.acquire(1)
			h.vs[len(h.vs)-1].Parents = append(h.vs[len(h.vs)-1].Parents, sha(777))
			return h.vs[len(h.vs)-1].SHA
		}, RuleBrokenChain},
		{"operator acquiring", func(h *hist) string {
			h.author = operator
			h.acquire(1)
			return h.vs[len(h.vs)-1].SHA
		}, RuleForeignAuthor},
		{"a git push with the writer's address", func(h *hist) string {
			h.acquire(1)
			h.vs[len(h.vs)-1].Verified = false
			return h.vs[len(h.vs)-1].SHA
		}, RuleUnsignedWriter},
		{"unknown author", func(h *hist) string {
			h.author = ""
			h.acquire(1)
			return h.vs[len(h.vs)-1].SHA
		}, RuleForeignAuthor},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHist(t, cfg(1))
			commit := tc.build(h)
			res := Verify(h.input())
			require.Equal(t, StatusViolations, res.Status)
			require.NotNil(t, res.FirstViolation)
			assert.Equal(t, tc.rule, res.FirstViolation.Rule, res.FirstViolation.Detail)
			assert.Equal(t, commit, res.FirstViolation.Commit)
			assert.NotEmpty(t, res.FirstViolation.Detail)
			// The checkpoint stops before the violation.
			for _, v := range res.Verified {
				assert.NotEqual(t, commit, v.SHA)
			}
		})
	}
}

func TestVerifyGenesis(t *testing.T) {
	t.Parallel()
	// A first write by acquire on the missing file is a genesis the core
	// produces; a first version with a holder nobody admitted is not.
	s := lockstate.Empty(lockName)
	next, _, err := lockstate.Acquire(s, lockstate.DefaultConfig(), lockstate.AcquireRequest{Identity: ident(1), Lease: time.Hour}, t0)
	require.NoError(t, err)
	data, _ := lockstate.Encode(next)
	in := Input{Lock: lockName, StartProven: true, Writers: []string{writer},
		Versions: []Version{{Commit: Commit{SHA: sha(1), Time: t0, AuthorLogin: writer, Verified: true}, BlobSHA: blobSHA(data), Content: data}}}
	res := Verify(in)
	assert.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.Equal(t, 1, res.Transitions["acquire"])

	// A first version holding a quarantine nobody released.
	q := lockstate.Empty(lockName)
	q.SchemaVersion, q.ActiveIncident = 6, nil
	q.Reservations = []lockstate.Reservation{{ReservationID: "q1", HolderID: "acme/game:1:build:default", Repository: "acme/game", Workflow: "ci",
		Job: "build", RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/1", RunnerID: "r1", Reason: "x",
		State: lockstate.ReservationQuarantine, CreatedAt: lockstate.FormatTime(t0)}}
	q.UpdatedAt = lockstate.FormatTime(t0)
	bad, err := lockstate.Encode(q)
	require.NoError(t, err)
	genesis := in
	genesis.Versions = []Version{{Commit: Commit{SHA: sha(1), Time: t0, AuthorLogin: writer, Verified: true}, BlobSHA: blobSHA(bad), Content: bad}}
	res = Verify(genesis)
	require.NotNil(t, res.FirstViolation)
	assert.Equal(t, RuleGenesis, res.FirstViolation.Rule)

	// Unproven start: incomplete, never a pass.
	in.StartProven = false
	res = Verify(in)
	assert.Equal(t, StatusIncomplete, res.Status)
	assert.Empty(t, res.Verified)
}

// Acknowledged findings are reported but pass, and the prefix continues.
func TestVerifyAcknowledged(t *testing.T) {
	t.Parallel()
	h := newHist(t, cfg(1))
	h.author = "mallory"
	h.acquire(1)
	bad := h.vs[len(h.vs)-1].SHA
	h.author = writer
	h.release(1, confirmed)
	in := h.input()
	in.Acknowledged = []string{bad}
	res := Verify(in)
	assert.Equal(t, StatusClean, res.Status)
	assert.Len(t, res.Findings, 1)
	assert.Len(t, res.Verified, len(h.vs))
	assert.Zero(t, res.Violations())
}

// The config in force decides: after maxHolders rises, two holders are
// fine; a writer that read the old config within the staleness window is
// explained too.
func TestVerifyConfigHistory(t *testing.T) {
	t.Parallel()
	h := newHist(t, cfg(2))
	h.acquire(1)
	h.acquire(2)
	in := h.input()
	in.Configs = []ConfigVersion{{SHA: sha(9000), Time: t0.Add(-time.Hour), Config: cfg(1)}, {SHA: sha(9001), Time: t0.Add(90 * time.Second), Config: cfg(2)}}
	res := Verify(in)
	assert.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)

	in.Configs = []ConfigVersion{{SHA: sha(9000), Time: t0.Add(-time.Hour), Config: cfg(1)}, {SHA: sha(9001), Time: t0.Add(time.Hour), Config: cfg(2)}}
	res = Verify(in)
	require.Equal(t, StatusViolations, res.Status)
	assert.Equal(t, RuleOverCapacity, res.FirstViolation.Rule)
}

func TestWindowCandidates(t *testing.T) {
	t.Parallel()
	vs := []ConfigVersion{
		{Time: t0, Config: cfg(1)},
		{Time: t0.Add(time.Hour), Config: cfg(3)},
		{Time: t0.Add(time.Hour + 5*time.Minute), Config: cfg(2)},
	}
	w := window(vs, t0.Add(-time.Minute), 10*time.Minute)
	assert.Equal(t, []lockstate.Config{lockstate.DefaultConfig()}, w.candidates, "before the first version: the defaults")
	w = window(vs, t0.Add(30*time.Minute), 10*time.Minute)
	assert.Equal(t, []lockstate.Config{cfg(1), lockstate.DefaultConfig()}, w.candidates)
	assert.Equal(t, 1, w.maxHolders)
	w = window(vs, t0.Add(time.Hour+6*time.Minute), 10*time.Minute)
	assert.Equal(t, cfg(2), w.inForce)
	assert.Equal(t, []lockstate.Config{cfg(2), cfg(3), cfg(1), lockstate.DefaultConfig()}, w.candidates)
	assert.Equal(t, 3, w.maxHolders)
	assert.True(t, w.isDefaultsOnly(lockstate.DefaultConfig()))
	w = window(vs, t0.Add(2*time.Hour), 10*time.Minute)
	assert.Equal(t, []lockstate.Config{cfg(2), lockstate.DefaultConfig()}, w.candidates)

	prev := lockstate.Empty(lockName)
	prev.SchemaVersion = 5
	assert.Contains(t, w.variants(prev), func() lockstate.Config { c := cfg(2); c.FencedAdmission = false; return c }())
}
