package linearizability

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The test driver applies the pure lockstate transitions to a lock and
// hands each write to the model as a Step, so tests can assert that the
// model accepts what the pure core does and refuses mutations of it.

const testLock = "seats"

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ident is job n (run n) on runner at attempt.
func ident(n int, runner string, attempt int) lockstate.Identity {
	repo := "acme/game"
	return lockstate.Identity{
		HolderID: fmt.Sprintf("%s:%d:build:default", repo, n), Repository: repo, Workflow: "Unity", Job: "build",
		RunID: strconv.Itoa(n), RunAttempt: strconv.Itoa(attempt), RunURL: fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, n),
		RunnerID: runner, RunnerName: runner, QueuedAt: t0,
	}
}

// holderOf is id admitted at t with token (0 below schema 6).
func holderOf(id lockstate.Identity, t time.Time, token int64) lockstate.Holder {
	return lockstate.Holder{Entry: lockstate.Entry{HolderID: id.HolderID, Repository: id.Repository, Workflow: id.Workflow, Job: id.Job,
		RunID: id.RunID, RunAttempt: id.RunAttempt, RunURL: id.RunURL, QueuedAt: lockstate.FormatTime(t), RunnerID: id.RunnerID, RunnerName: id.RunnerName},
		AcquiredAt: lockstate.FormatTime(t), ExpiresAt: lockstate.FormatTime(t.Add(time.Hour)), FencingToken: token}
}

func jobActor(id lockstate.Identity) Actor {
	return Actor{Kind: ActorJob, HolderID: id.HolderID, Attempt: id.RunAttempt, RunnerName: id.RunnerName}
}

// fakeEvidence is a set of finished runs and completed jobs.
type fakeEvidence struct {
	runs map[string]bool // runID/attempt
	jobs map[string]bool
}

func newEvidence() *fakeEvidence {
	return &fakeEvidence{runs: map[string]bool{}, jobs: map[string]bool{}}
}

func (e *fakeEvidence) RunFinished(runID, attempt string) bool { return e.runs[runID+"/"+attempt] }
func (e *fakeEvidence) JobCompleted(jobID string) bool         { return e.jobs[jobID] }

// driver is one lock driven through the pure transitions.
type driver struct {
	t     require.TestingT
	rules LockRules
	cfg   lockstate.Config
	st    *lockstate.State
	now   time.Time
	ev    *fakeEvidence
	steps []Step
	resN  int
}

func newDriver(t require.TestingT, schema int, cfg lockstate.Config) *driver {
	st := lockstate.Empty(testLock)
	st.SchemaVersion = schema
	if schema >= 4 {
		st.Reservations = []lockstate.Reservation{}
	}
	return &driver{t: t, st: st, cfg: cfg, now: t0, ev: newEvidence(),
		rules: LockRules{Lock: testLock, MaxHolders: cfg.MaxHolders, MaxOvertakes: cfg.MaxOvertakes}}
}

// cfgAt is the config of a lock at schema (every flag up to it).
func cfgAt(schema, seats, cooldown, maxOvertakes int) lockstate.Config {
	return lockstate.Config{
		MaxHolders: seats, ReleaseCooldownSeconds: cooldown, MaxOvertakes: maxOvertakes,
		RunnerSerialization: schema >= 3, ResourceLifecycle: schema >= 4, AccountHealth: schema >= 5, FencedAdmission: schema >= 6,
	}
}

// commit records the write prev -> next by actor (when it changed the state).
func (d *driver) commit(next *lockstate.State, changed bool, a Actor) (Step, bool) {
	if !changed {
		return Step{}, false
	}
	next.UpdatedAt = lockstate.FormatTime(d.now)
	// Round-trip through the codec, as a write through the store does.
	data, err := lockstate.Encode(next)
	require.NoError(d.t, err)
	dec, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: testLock})
	require.NoError(d.t, err)
	s := Step{Prev: d.st, Next: dec, Actor: a, At: d.now, Evidence: d.ev}
	d.st = dec
	d.steps = append(d.steps, s)
	return s, true
}

func (d *driver) acquire(id lockstate.Identity) (Step, lockstate.AcquireDecision, error) {
	next, dec, err := lockstate.Acquire(d.st, d.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Hour}, d.now)
	if err != nil {
		return Step{}, dec, err
	}
	s, _ := d.commit(next, dec.Changed, jobActor(id))
	return s, dec, nil
}

func (d *driver) release(id lockstate.Identity, report lockstate.Report) (Step, lockstate.CleanupDecision, error) {
	d.resN++
	next, dec, err := lockstate.Cleanup(d.st, d.cfg, lockstate.CleanupRequest{
		HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID, RunnerName: id.RunnerName,
		Report: report, ReservationID: fmt.Sprintf("res-%d", d.resN), Identity: id,
	}, d.now)
	if err != nil {
		return Step{}, dec, err
	}
	if dec.Released && lockstate.HandoffAllowed(next) {
		after, h, err := lockstate.Handoff(next, d.cfg, d.now)
		require.NoError(d.t, err)
		if h.Changed {
			next = after
		}
	}
	s, _ := d.commit(next, dec.Changed, jobActor(id))
	return s, dec, nil
}

var (
	confirmed = lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}
	unproven  = lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupEvidenceUnknown}
	blocked   = lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthBlocked, Reason: lockstate.ReasonAccountLimit}
)

// finish marks run id's attempt finished (terminal) in the evidence.
func (d *driver) finish(id lockstate.Identity) { d.ev.runs[id.RunID+"/"+id.RunAttempt] = true }

// reap runs the reaper with terminal-run evidence for every entry whose run
// the evidence says finished, and unknown evidence for the rest.
func (d *driver) reap() (Step, bool) {
	runEv := func(runID, attempt string) lockstate.Evidence {
		if d.ev.RunFinished(runID, attempt) {
			return lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: "completed", Conclusion: "failure", RunAttempt: attempt}}
		}
		return lockstate.Evidence{Run: lockstate.RunEvidence{Known: false}}
	}
	var req lockstate.ReapRequest
	for _, h := range d.st.Holders {
		d.resN++
		req.Holders = append(req.Holders, lockstate.HolderEvidence{Holder: h, Evidence: runEv(h.RunID, h.RunAttempt), ReservationID: fmt.Sprintf("res-%d", d.resN)})
	}
	for _, r := range d.st.Reservations {
		if r.State == lockstate.ReservationQuarantine {
			req.Quarantines = append(req.Quarantines, lockstate.QuarantineEvidence{Reservation: r, Evidence: runEv(r.RunID, r.RunAttempt)})
		}
	}
	for _, e := range d.st.Queue {
		req.Queue = append(req.Queue, lockstate.QueueEvidence{Entry: e, Evidence: runEv(e.RunID, e.RunAttempt)})
	}
	req.LeaseGrace = DefaultQuarantineGrace
	next, dec, err := lockstate.Reap(d.st, d.cfg, req, d.now)
	require.NoError(d.t, err)
	return d.commit(next, dec.Changed, Actor{Kind: ActorReaper})
}

func (d *driver) recoverQuarantine(id string) (Step, error) {
	next, dec, err := lockstate.RecoverQuarantine(d.st, d.cfg, id, d.now)
	if err != nil {
		return Step{}, err
	}
	s, _ := d.commit(next, dec.Changed, Actor{Kind: ActorRecover, Target: id})
	return s, nil
}

func (d *driver) recoverIncident() (Step, error) {
	inc := d.st.ActiveIncident
	require.NotNil(d.t, inc)
	d.resN++
	next, dec, err := lockstate.RecoverIncident(d.st, d.cfg, inc.IncidentID, d.now, fmt.Sprintf("res-%d", d.resN))
	if err != nil {
		return Step{}, err
	}
	s, _ := d.commit(next, dec.Changed, Actor{Kind: ActorRecoverIncident, Target: inc.IncidentID})
	return s, nil
}

// codes lists the violation codes of a verdict.
func codes(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Code)
	}
	return out
}

func describe(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\n  " + v.String())
	}
	return b.String()
}
