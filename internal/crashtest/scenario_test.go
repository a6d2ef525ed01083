package crashtest

import (
	"context"
	"fmt"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lock configs: schema 6 (fenced admission) with runner serialization,
// resource lifecycle (cooldowns and quarantines) and account health
// (incidents). The state is seeded at schema 6.
const (
	cfgTwoSeats   = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"releaseCooldownSeconds":30,"maxOvertakes":2}`
	cfgThreeSeats = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"releaseCooldownSeconds":30,"maxOvertakes":2}`
	// cfgHandoff is a schema-3 lock (runner serialization only), where a
	// release hands its seat directly to the next waiter.
	cfgHandoff = `{"maxHolders":1,"runnerSerialization":true}`
	// cfgExample is locks/example.config.json's shape (serialization,
	// lifecycle and account health at once): on a lock with no state file
	// the first write creates it at schema 5.
	cfgExample = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":30}`
	// cfgLifecycle asks a schema-3 lock for schema 4: the release of its
	// last holder drains it and carries the upgrade in the same write.
	cfgLifecycle = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":30}`
	// cfgNamedSeats is a schema-6 lock naming two pro seats (one also
	// carries gpu) and a plus seat, with priority classes (issue 25): every
	// admission write records a seat, the seat affinity array, labels and a
	// class (scenario.seatRules).
	cfgNamedSeats = `{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"releaseCooldownSeconds":30,"maxOvertakes":2,` +
		`"seats":[{"name":"pro-1","labels":["pro"]},{"name":"pro-2","labels":["gpu","pro"]},{"name":"plus-1","labels":["plus"]}],"priority":{"max":9,"maxForPullRequests":0}}`
)

// Declared budgets, measured from the start of the victim step.
const (
	// acquire: timeout-minutes, then the 30 s failure-cleanup window.
	budgetAcquire = victimTimeout + 30*time.Second
	// post-cleanup: the post step's 60 s window (acquire/post.go postWindow).
	budgetPost = 60 * time.Second
	// release: release-retry-deadline-seconds 120 + the late attempt's 10 s
	// + two conflict delays (release/run.go window).
	budgetRelease = 120*time.Second + 10*time.Second + 2*time.Second
	// reap: TotalBudget, the write deadline (reap.go).
	budgetReap = reap.TotalBudget
	// recover declares no deadline of its own; the recover workflow's job
	// timeout (10 min) is the only bound, used as the watchdog.
	budgetRecover = 10 * time.Minute
	// sigintWindow is the runner's SIGINT→SIGTERM interval.
	sigintWindow = 7500 * time.Millisecond
)

// victim is the step a case cuts.
type victim struct {
	job      *actiontest.Job     // consumer job (acquire, post, release), else nil
	holderID string              // the identity the step acts for ("" for reap/recover)
	signals  *lockaction.Signals // nil when the step has no signal handling
	outPath  string              // GITHUB_OUTPUT of the step
	stdout   fmt.Stringer
	run      func(ctx context.Context, tr http.RoundTripper) error
	op       linearizability.Actor // the reaper or recovery step's identity
}

// scenario is one action's realistic, deterministic setting.
type scenario struct {
	name string
	// action is the action the victim runs when name is a variant of it
	// ("release-contended"); "" means name.
	action string
	config string
	seats  int
	budget time.Duration
	// ownBudget is false when the action has no deadline of its own (the
	// budget is the workflow's job timeout).
	ownBudget bool
	// schema is the schema the state is seeded at (0: 6, fenced; -1: no
	// state file at all, a brand-new lock).
	schema int
	// refSays is a line the fault-free reference run must print (proof
	// the scenario reaches the path it is about).
	refSays string
	// refOutputs are outputs the fault-free reference run must report.
	refOutputs map[string]string
	// seatRules: the config names seats and priority classes, whose
	// admissions pass earlier waiters by design (a higher class, labels
	// another seat carries). The linearizability model knows anonymous
	// FIFO seats only, so such a case is judged by the checker's seat
	// rules (seat uniqueness and labels, the overtaking bound, priority
	// order) instead of porcupine.
	seatRules bool
	setup     func(ctx context.Context, t testing.TB, w *world) *victim
}

// stateSchema is the schema the scenario's state is seeded at.
func (sc scenario) stateSchema() int {
	switch sc.schema {
	case 0:
		return lockstate.FencedSchemaVersion
	case -1:
		return 0
	}
	return sc.schema
}

var scenarios = []scenario{
	{name: "acquire", config: cfgTwoSeats, seats: 2, budget: budgetAcquire, ownBudget: true, setup: setupAcquire},
	{name: "release", config: cfgTwoSeats, seats: 2, budget: budgetRelease, ownBudget: true, setup: setupRelease},
	{name: "post-cleanup", config: cfgTwoSeats, seats: 2, budget: budgetPost, ownBudget: true, setup: setupPost},
	{name: "reap", config: cfgTwoSeats, seats: 2, budget: budgetReap, ownBudget: true, setup: setupReap},
	{name: "recover-quarantine", config: cfgThreeSeats, seats: 3, budget: budgetRecover, setup: setupRecoverQuarantine},
	{name: "recover-incident", config: cfgThreeSeats, seats: 3, budget: budgetRecover, setup: setupRecoverIncident},
	// Contention: requests that only happen when another writer wins the
	// compare-and-swap race (the 409, the re-read, the second write) are
	// steps too.
	{name: "acquire-contended", action: "acquire", config: cfgTwoSeats, seats: 2, budget: budgetAcquire, ownBudget: true, setup: setupAcquireContended},
	{name: "release-contended", action: "release", config: cfgTwoSeats, seats: 2, budget: budgetRelease, ownBudget: true, setup: setupReleaseContended},
	// Direct handoff (schema <= 3): the release write also admits the
	// waiter, which learns it on its next poll.
	{name: "release-handoff", action: "release", config: cfgHandoff, seats: 1, schema: 3, budget: budgetRelease, ownBudget: true, setup: setupReleaseHandoff,
		refSays: "Handed the freed seat of " + actiontest.Lock + " directly to "},
	// A brand-new lock: the victim's first write creates the state file
	// (and the branch) directly at the schema the config asks for.
	{name: "acquire-fresh-lock", action: "acquire", config: cfgExample, seats: 2, schema: -1, budget: budgetAcquire, ownBudget: true, setup: setupAcquireFresh},
	// A pending upgrade: the victim is the last holder of a schema-3 lock
	// whose config asks for 4; its release drains the lock and writes the
	// upgrade, with the waiter behind it carried across.
	{name: "release-upgrade", action: "release", config: cfgLifecycle, seats: 2, schema: 3, budget: budgetRelease, ownBudget: true, setup: setupReleaseUpgrade,
		refSays: "also upgraded it to schema 4"},
	// A pending upgrade written by a waiter's own poll: schema 5, the
	// config asks for 6, a cooldown blocks the drain; the victim waits
	// (paused) and writes the upgrade with its admission once it expires.
	{name: "acquire-upgrade", action: "acquire", config: cfgTwoSeats, seats: 2, schema: 5, budget: budgetAcquire, ownBudget: true, setup: setupAcquireUpgrade,
		refSays: "is draining for its upgrade from schema 5 to schema 6"},
	// Named seats, labels and a priority class (issue 25): the victim asks
	// for a pro seat at priority 5 while both pro seats are taken (a holder
	// and a cooldown); it queues with its labels and class, polls, and is
	// admitted to the pro seat whose cooldown expires, recording the seat
	// and the seat's affinity record.
	{name: "acquire-named-seat", action: "acquire", config: cfgNamedSeats, seats: 3, budget: budgetAcquire, ownBudget: true, setup: setupAcquireNamedSeat, seatRules: true,
		refSays: "queue position 1 of 1", refOutputs: map[string]string{"acquired": "true", "seat": "pro-2", "seat-labels": "gpu,pro"}},
	// acquire-by-machine (issue 26): on a lock serialized by machine the
	// victim, a sibling agent of a quarantined job's machine, reclaims the
	// machine's quarantine (machine_test.go).
	{name: "acquire-by-machine", action: "acquire", config: cfgByMachine, seats: 2, budget: budgetAcquire, ownBudget: true, setup: setupAcquireByMachine,
		refSays: "serializes by machine", refOutputs: map[string]string{"acquired": "true", "quarantine-recovered": "true"}},
}

// act is the action the scenario's victim runs.
func (sc scenario) act() string {
	if sc.action != "" {
		return sc.action
	}
	return sc.name
}

func must(t testing.TB, what string, err error) {
	t.Helper()
	require.NoError(t, err, "setup: %s", what)
}

func jobVictim(j *actiontest.Job, run func(ctx context.Context, tr http.RoundTripper) error) *victim {
	return &victim{job: j, holderID: j.HolderID(), signals: j.Signals, outPath: j.Env["GITHUB_OUTPUT"], stdout: j.Out, run: run}
}

// setupAcquire: a live holder on runner-h and a cooldown (runner-p) that
// expires 4 s after the victim starts fill both seats, so the victim queues
// (a queue write), polls, and is admitted when the cooldown expires (an
// admission write).
func setupAcquire(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	p := w.job("previous", "runner-p")
	must(t, "previous acquires", w.acquire(ctx, p))
	must(t, "previous releases", w.release(ctx, p, nil, "resource-cleanup-status", "confirmed"))
	w.finish(p, "success")
	time.Sleep(26 * time.Second)
	v := w.job("victim", "runner-v")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, tr))
	})
}

// setupAcquireNamedSeat: a pro holder on runner-h (pro-1), a plus holder
// on runner-x (plus-1) and a cooldown on pro-2 (runner-p) that expires 4 s
// after the victim starts; the victim (pro, priority 5) queues, polls and
// takes pro-2 when the cooldown expires.
func setupAcquireNamedSeat(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h").Input("seat-labels", "pro")
	must(t, "pro holder acquires", w.acquire(ctx, h))
	x := w.job("plus-holder", "runner-x").Input("seat-labels", "plus")
	must(t, "plus holder acquires", w.acquire(ctx, x))
	p := w.job("previous", "runner-p").Input("seat-labels", "gpu,pro")
	must(t, "previous acquires", w.acquire(ctx, p))
	must(t, "previous releases", w.release(ctx, p, nil, "resource-cleanup-status", "confirmed"))
	w.finish(p, "success")
	time.Sleep(26 * time.Second)
	v := w.job("victim", "runner-v").Input("seat-labels", "pro").Input("priority", "5")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, tr))
	})
}

// setupAcquireFresh: no state file exists; the victim is the lock's first
// job (the README's inputs: a runner id and require-resource-lifecycle).
func setupAcquireFresh(_ context.Context, _ testing.TB, w *world) *victim {
	v := w.job("victim", "runner-v").Input("require-resource-lifecycle", "true")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, tr))
	})
}

// setupReleaseUpgrade: the victim holds a seat of a schema-3 lock; the
// operator then asks for schema 4 (resource lifecycle); a waiter on
// another runner polls behind it, paused. The victim's release removes the
// last holder and writes schema 4 in the same commit.
func setupReleaseUpgrade(ctx context.Context, t testing.TB, w *world) *victim {
	w.SetConfig(cfgHandoff)
	v := w.job("victim", "runner-v")
	must(t, "victim acquires", w.acquire(ctx, v))
	w.SetConfig(cfgLifecycle)
	waiter := w.job("waiter", "runner-w")
	w.background.Go(func() { w.rival(ctx, waiter) })
	time.Sleep(time.Second)
	synctest.Wait()
	require.Equal(t, 1, lockstate.QueuePosition(w.State(), waiter.HolderID()), "setup: the waiter is queued (paused)")
	// The victim holds its seat past the minute in which its acquire's
	// config read stands for its release's (lockaction.ConfigNoteMaxAge,
	// divergences R13): the release reads the config that asks for the
	// upgrade.
	time.Sleep(lockaction.ConfigNoteMaxAge)
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return w.release(ctx, v, tr, "resource-cleanup-status", "confirmed")
	})
}

// setupAcquireUpgrade: a schema-5 lock whose only content is a cooldown
// that expires 4 s after the victim starts; the config asks for schema 6.
// The victim joins (paused: the cooldown blocks the drain), then writes the
// upgrade and its own admission.
func setupAcquireUpgrade(ctx context.Context, t testing.TB, w *world) *victim {
	w.SetConfig(`{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":30}`)
	p := w.job("previous", "runner-p")
	must(t, "previous acquires", w.acquire(ctx, p))
	must(t, "previous releases", w.release(ctx, p, nil, "resource-cleanup-status", "confirmed"))
	w.finish(p, "success")
	w.SetConfig(cfgTwoSeats)
	time.Sleep(26 * time.Second)
	v := w.job("victim", "runner-v")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, tr))
	})
}

// setupAcquireContended: one seat is held, one is free; the victim's
// admission write loses the race to the holder's release (a cooldown on
// the holder's seat), so it gets 409, re-reads and is admitted to the free
// seat by a second write.
func setupAcquireContended(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	v := w.job("victim", "runner-v")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, w.raceFirstPut(t, tr, h)))
	})
}

// setupReleaseContended: the victim and a holder hold both seats; the
// victim's release write loses the race to the holder's release, so it
// gets 409, re-reads and releases by a second write.
func setupReleaseContended(ctx context.Context, t testing.TB, w *world) *victim {
	return releaseVictim(ctx, t, w, true)
}

// raceFirstPut wraps the victim's transport: just before the victim's
// first state write leaves, rival releases its seat (through the real
// release action, on its own transport) and its run finishes, so that
// write is a compare-and-swap loser.
func (w *world) raceFirstPut(t testing.TB, base http.RoundTripper, rival *actiontest.Job) http.RoundTripper {
	var once sync.Once
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/"+actiontest.StatePath) {
			once.Do(func() {
				assert.NoError(t, w.release(r.Context(), rival, nil, "resource-cleanup-status", "confirmed"), "setup: the rival's release failed")
				w.finish(rival, "success")
			})
		}
		return base.RoundTrip(r)
	})
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// setupRelease: the victim holds a seat next to a live holder and releases
// it with confirmed cleanup (a cooldown).
func setupRelease(ctx context.Context, t testing.TB, w *world) *victim {
	return releaseVictim(ctx, t, w, false)
}

// releaseVictim is the release setting; contended makes the holder's
// release win the race against the victim's first write.
func releaseVictim(ctx context.Context, t testing.TB, w *world, contended bool) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	v := w.job("victim", "runner-v")
	must(t, "victim acquires", w.acquire(ctx, v))
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		if contended {
			tr = w.raceFirstPut(t, tr, h)
		}
		return w.release(ctx, v, tr, "resource-cleanup-status", "confirmed")
	})
}

// setupReleaseHandoff: on a one-seat schema-3 lock the victim holds the
// seat and a live waiter polls behind it; the victim's release hands the
// seat to the waiter in the same write. The waiter is a rival (acquire,
// hold 10 s, release), started before the victim step, so every cut of the
// release meets a real job that either is handed the seat, is admitted by
// its own write after the reaper drops a dead victim, or times out.
func setupReleaseHandoff(ctx context.Context, t testing.TB, w *world) *victim {
	v := w.job("victim", "runner-v")
	must(t, "victim acquires", w.acquire(ctx, v))
	waiter := w.job("waiter", "runner-w")
	w.background.Go(func() { w.rival(ctx, waiter) })
	time.Sleep(time.Second)
	synctest.Wait()
	require.Equal(t, 1, lockstate.QueuePosition(w.State(), waiter.HolderID()), "setup: the waiter is queued")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return w.release(ctx, v, tr, "resource-cleanup-status", "confirmed")
	})
}

// setupPost: the victim's acquire-with-cleanup main step holds a seat (and
// registered the post step); the victim step is the post step, which
// quarantines the unproven seat.
func setupPost(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	v := w.job("victim", "runner-v")
	v.Env[acquire.EnvMode] = acquire.ModeAcquireWithCleanup
	must(t, "victim main step acquires", w.acquire(ctx, v))
	postStep(t, v)
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		w.intent(v.HolderID(), time.Now())
		return acquire.Run(ctx, deps(v, tr))
	})
}

// postStep turns j's environment into its post step's: the runner exposes
// what the main step saved as STATE_<name>.
func postStep(t testing.TB, j *actiontest.Job) {
	saved := j.Saved()[acquire.StateCleanup]
	require.Equal(t, "enabled", saved, "setup: the main step of %s did not register the post step (%q)", j.Name, saved)
	j.Env[acquire.EnvMode] = acquire.ModePostCleanup
	j.Env["STATE_"+acquire.StateCleanup] = saved
	j.ResetFiles()
}

// dieAfterPut lets a job's first successful contents write through and then
// kills the job: every later request is refused.
type dieAfterPut struct {
	base  http.RoundTripper
	onDie func()
	mu    sync.Mutex
	dead  bool
}

func (d *dieAfterPut) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	dead := d.dead
	d.mu.Unlock()
	if dead {
		drain(r)
		return nil, errKilled
	}
	resp, err := d.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPut && resp.StatusCode < 300 {
		d.mu.Lock()
		d.dead = true
		d.mu.Unlock()
		d.onDie()
	}
	return resp, err
}

// setupReap: a live holder, a holder whose run failed, and a queue entry
// of a run that was cancelled while it waited (the job was killed right
// after its queue write). The reaper quarantines the dead holder and drops
// the finished queue entry.
func setupReap(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	d := w.job("dead", "runner-d")
	must(t, "dead job acquires", w.acquire(ctx, d))
	w.finish(d, "failure")
	f := w.job("gone", "runner-f")
	fctx, cancel := context.WithCancel(ctx)
	dd := f.Deps()
	dd.Transport = &dieAfterPut{base: linWrap(f, w.Em.Transport()), onDie: cancel}
	_ = acquire.Run(fctx, dd)
	cancel()
	require.Equal(t, "queue", presence(w.State(), f.HolderID()), "setup: the killed waiter is not queued")
	w.finish(f, "cancelled")
	env := w.opEnv()
	out := &actiontest.SyncBuffer{}
	return &victim{outPath: env["GITHUB_OUTPUT"], stdout: out, op: linOp(env), run: func(ctx context.Context, tr http.RoundTripper) error {
		w.reapIntents()
		return reap.Run(ctx, w.opDeps(env, out, tr))
	}}
}

// seedRecovery builds the operator-recovery setting: a live holder, a
// quarantine left by a post step (its run failed), and an active account
// incident reported by a blocked release. It returns the quarantine's
// reservation ID and the incident ID.
func seedRecovery(ctx context.Context, t testing.TB, w *world) (string, string) {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	q := w.job("quarantined", "runner-q")
	q.Env[acquire.EnvMode] = acquire.ModeAcquireWithCleanup
	must(t, "quarantined job acquires", w.acquire(ctx, q))
	i := w.job("incident", "runner-i")
	must(t, "incident job acquires", w.acquire(ctx, i))
	postStep(t, q)
	w.intent(q.HolderID(), time.Now())
	must(t, "post step quarantines", acquire.Run(ctx, deps(q, nil)))
	w.finish(q, "failure")
	must(t, "blocked release", w.release(ctx, i, nil, "resource-cleanup-status", "unknown", "resource-health", "blocked", "resource-reason", lockstate.ReasonAccountLimit))
	w.finish(i, "failure")
	s := w.State()
	require.NotNil(t, s.ActiveIncident, "setup: no incident")
	rs := reservationsOf(s, q.HolderID())
	require.False(t, len(rs) != 1 || rs[0].State != lockstate.ReservationQuarantine, "setup: want one quarantine of %s, have %+v", q.HolderID(), s.Reservations)
	return rs[0].ReservationID, s.ActiveIncident.IncidentID
}

func recoverVictim(w *world, inputs ...string) *victim {
	env := w.opEnv(inputs...)
	out := &actiontest.SyncBuffer{}
	return &victim{outPath: env["GITHUB_OUTPUT"], stdout: out, op: linOp(env), run: func(ctx context.Context, tr http.RoundTripper) error {
		return recoveraction.Run(ctx, w.opDeps(env, out, tr))
	}}
}

func setupRecoverQuarantine(ctx context.Context, t testing.TB, w *world) *victim {
	qid, _ := seedRecovery(ctx, t, w)
	return recoverVictim(w, "operation", recovery.OperationRecover, "reservation-id", qid, "resource-safe", "true")
}

func setupRecoverIncident(ctx context.Context, t testing.TB, w *world) *victim {
	_, inc := seedRecovery(ctx, t, w)
	return recoverVictim(w, "operation", recovery.OperationRecoverIncident, "incident-id", inc, "portal-cleanup-confirmed", "true")
}
