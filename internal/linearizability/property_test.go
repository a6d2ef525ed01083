package linearizability

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestModelAcceptsThePureCore (soundness): every write the pure lockstate
// transitions make — acquire with its migrations, release with direct
// handoff and incidents, the post step, the reaper with proof, operator
// recovery, reruns — on every schema path is a legal step of the model. A
// rule of the model stricter than the specification the core implements
// fails here, before it could report a false violation in a simulation.
func TestModelAcceptsThePureCore(t *testing.T) {
	seen := map[string]int{}
	defer func() { t.Logf("judged writes: %v", seen) }()
	rapid.Check(t, func(rt *rapid.T) {
		start := rapid.IntRange(2, 6).Draw(rt, "schema")
		target := rapid.IntRange(start, 6).Draw(rt, "target")
		seats := rapid.IntRange(1, 3).Draw(rt, "seats")
		cfg := cfgAt(start, seats, rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown"), rapid.IntRange(0, 2).Draw(rt, "maxOvertakes"))
		d := newDriver(rt, start, cfg)
		runners := []string{"r1", "r2", "r3"}
		jobs := make([]lockstate.Identity, rapid.IntRange(2, 6).Draw(rt, "jobs"))
		for i := range jobs {
			jobs[i] = ident(100+i, rapid.SampledFrom(runners).Draw(rt, "runner"), 1)
		}
		for n := rapid.IntRange(1, 40).Draw(rt, "ops"); n > 0; n-- {
			d.now = d.now.Add(time.Duration(rapid.IntRange(0, 90).Draw(rt, "minutes")) * time.Minute)
			i := rapid.IntRange(0, len(jobs)-1).Draw(rt, "job")
			id := jobs[i]
			var s Step
			var ok bool
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); op {
			case 0, 1, 2:
				step, dec, err := d.acquire(id)
				s, ok = step, err == nil && dec.Changed
			case 3, 4:
				report := rapid.SampledFrom([]lockstate.Report{confirmed, unproven, blocked, {}}).Draw(rt, "report")
				step, dec, err := d.release(id, report)
				s, ok = step, err == nil && dec.Changed
			case 5:
				d.finish(id)
				s, ok = d.reap()
			case 6:
				// A rerun: the attempt ends, the next one starts.
				d.finish(id)
				a, _ := strconv.Atoi(id.RunAttempt)
				jobs[i].RunAttempt = strconv.Itoa(a + 1)
			case 7:
				for _, r := range d.st.Reservations {
					if r.State == lockstate.ReservationQuarantine {
						step, err := d.recoverQuarantine(r.ReservationID)
						s, ok = step, err == nil
						break
					}
				}
			case 8:
				if d.st.ActiveIncident != nil {
					step, err := d.recoverIncident()
					s, ok = step, err == nil
				}
			case 9:
				// The operator raises one config flag.
				if lvl := schemaOf(d.st) + 1; lvl <= target {
					d.cfg = cfgAt(lvl, seats, d.cfg.ReleaseCooldownSeconds, d.cfg.MaxOvertakes)
				}
			}
			if !ok {
				continue
			}
			seen[string(s.Actor.Kind)]++
			j := &judge{r: d.rules, st: s, prev: s.Prev, next: s.Next}
			j.index()
			seen["admissions"] += len(j.admitted)
			for _, h := range j.admitted {
				if h.HolderID != s.Actor.HolderID {
					seen["handoffs"]++
				}
				if j.reclaimed(h) {
					seen["reclaims"]++
				}
			}
			for _, q := range s.Next.Queue {
				if pi, ok := j.prevQueue[q.HolderID]; ok && s.Prev.Queue[pi].Overtakes < q.Overtakes {
					seen["overtakes"]++
				}
			}
			seen["removed-holders"] += len(j.removedHolders)
			if schemaOf(s.Next) > schemaOf(s.Prev) {
				seen["migrations"]++
			}
			if len(s.Next.Reservations) > len(s.Prev.Reservations) {
				seen["reservations-created"]++
			}
			if vs := d.rules.Judge(s); len(vs) > 0 {
				rt.Fatalf("the model refused a write of the pure core by %s:%s\nprev: %s\nnext: %s", s.Actor, describe(vs), summarize(s.Prev), summarize(s.Next))
			}
		}
	})
}

// TestModelRefusesMutations (completeness, by example): a legal admission
// altered the way each planted bug or a broken client would alter it is
// refused, each with its own code.
func TestModelRefusesMutations(t *testing.T) {
	d := newDriver(t, 6, cfgAt(6, 1, 0, 1))
	h := ident(1, "r1", 1)
	_, dec, err := d.acquire(h)
	require.NoError(t, err)
	require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
	w := ident(2, "r2", 1)
	_, dec, err = d.acquire(w)
	require.NoError(t, err)
	require.Equal(t, lockstate.OutcomeQueued, dec.Outcome)
	base := d.st

	mut := func(f func(s *lockstate.State)) Step {
		next := base.Clone()
		f(next)
		return Step{Prev: base, Next: next, Actor: jobActor(w), At: d.now}
	}
	admitW := func(s *lockstate.State) {
		s.Queue = nil
		s.FencingToken++
		s.Holders = append(s.Holders, lockstate.Holder{Entry: base.Queue[0], AcquiredAt: lockstate.FormatTime(d.now), ExpiresAt: lockstate.FormatTime(d.now.Add(time.Hour)), FencingToken: s.FencingToken})
		s.Holders[len(s.Holders)-1].Overtakes = 0
	}
	cases := []struct {
		name string
		step Step
		want string
	}{
		{"a second holder on one seat", mut(admitW), CodeOverAdmission},
		{"admitted by another job", func() Step {
			s := mut(admitW)
			s.Actor = jobActor(ident(9, "r9", 1))
			return s
		}(), CodeAdmissionUnauthorized},
		{"the counter skipped", mut(func(s *lockstate.State) { s.FencingToken += 2 }), CodeFencing},
		{"the counter went back", mut(func(s *lockstate.State) { s.FencingToken-- }), CodeFencing},
		{"the holder removed by the waiter", mut(func(s *lockstate.State) { s.Holders = nil }), CodeRemovalUnauthorized},
		{"the holder removed by the reaper without proof", func() Step {
			s := mut(func(s *lockstate.State) { s.Holders = nil })
			s.Actor = Actor{Kind: ActorReaper}
			return s
		}(), CodeRemovalUnauthorized},
		{"a waiter's overtakes changed without an admission", mut(func(s *lockstate.State) { s.Queue[0].Overtakes = 1 }), CodeOvertakeCount},
		{"the schema went down", mut(func(s *lockstate.State) { s.SchemaVersion = 5; s.FencingToken = 0; s.Holders[0].FencingToken = 0 }), CodeSchemaDowngrade},
		{"an old client wrote schema 6", func() Step {
			s := mut(func(s *lockstate.State) { s.Queue[0].JobID = "7" })
			s.Actor.Kind = ActorOldClient
			return s
		}(), CodeOldClientSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs := d.rules.Judge(tc.step)
			assert.Contains(t, codes(vs), tc.want, "verdict:%s", describe(vs))
		})
	}
}

// TestRulesTable pins the rules on small hand-built steps of the pure core.
func TestRulesTable(t *testing.T) {
	t.Run("FIFO on one runner and the overtaking barrier", func(t *testing.T) {
		// maxHolders 2, maxOvertakes 1: H holds on r1; W waits on r1
		// (blocked); X on r2 is admitted past W (W overtaken once); X
		// releases; Y on r3 may not pass W again (W is a barrier).
		d := newDriver(t, 6, cfgAt(6, 2, 0, 1))
		H, W, X, Y := ident(1, "r1", 1), ident(2, "r1", 1), ident(3, "r2", 1), ident(4, "r3", 1)
		for _, id := range []lockstate.Identity{H, W, X} {
			s, _, err := d.acquire(id)
			require.NoError(t, err)
			require.Empty(t, d.rules.Judge(s), "legal %s", id.HolderID)
		}
		require.Equal(t, 1, d.st.Queue[0].Overtakes, "X overtook W")
		_, _, err := d.release(X, confirmed)
		require.NoError(t, err)
		prev := d.st
		s, dec, err := d.acquire(Y)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeQueued, dec.Outcome, "the barrier holds Y back")
		require.Empty(t, d.rules.Judge(s))

		// The forbidden alternative: Y admitted past the barrier.
		bad := prev.Clone()
		bad.FencingToken++
		bad.Holders = append(bad.Holders, holderOf(Y, d.now, bad.FencingToken))
		bad.Queue[0].Overtakes++
		assert.Contains(t, codes(d.rules.Judge(Step{Prev: prev, Next: bad, Actor: jobActor(Y)})), CodeOvertakeBarrier)

		// W's own runner: a later job on r1 admitted ahead of W.
		Z := ident(5, "r1", 1)
		bad = prev.Clone()
		bad.Holders[0].RunnerID = "r0" // free r1 for the sake of the example
		prev2 := bad.Clone()
		bad.FencingToken++
		bad.Holders = append(bad.Holders, holderOf(Z, d.now, bad.FencingToken))
		assert.Contains(t, codes(d.rules.Judge(Step{Prev: prev2, Next: bad, Actor: jobActor(Z)})), CodeFIFOSameRunner)
	})

	t.Run("run-attempt fence", func(t *testing.T) {
		d := newDriver(t, 4, cfgAt(4, 1, 0, 0))
		old := ident(1, "r1", 1)
		_, _, err := d.acquire(old)
		require.NoError(t, err)
		d.finish(old)
		_, ok := d.reap()
		require.True(t, ok, "the reaper quarantines the finished attempt")
		rerun := ident(1, "r1", 2)
		s, dec, err := d.acquire(rerun)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome, "the rerun reclaims its runner's quarantine")
		require.Empty(t, d.rules.Judge(s))
		// The stale attempt's release may not remove the rerun's seat.
		next := d.st.Clone()
		next.Holders = nil
		vs := d.rules.Judge(Step{Prev: d.st, Next: next, Actor: jobActor(old)})
		assert.Contains(t, codes(vs), CodeRemovalUnauthorized, "verdict:%s", describe(vs))
		s, _, err = d.release(old, confirmed)
		require.NoError(t, err)
		assert.Nil(t, s.Next, "the pure core writes nothing for the stale attempt")
	})

	t.Run("quarantine auto-recovery needs a finished run and the grace", func(t *testing.T) {
		d := newDriver(t, 5, cfgAt(5, 1, 30, 0))
		j := ident(1, "r1", 1)
		_, _, err := d.acquire(j)
		require.NoError(t, err)
		_, _, err = d.release(j, unproven)
		require.NoError(t, err)
		require.Equal(t, lockstate.ReservationQuarantine, d.st.Reservations[0].State)
		prev := d.st
		d.now = d.now.Add(5 * time.Hour)
		recovered := prev.Clone()
		recovered.Reservations = nil
		step := Step{Prev: prev, Next: recovered, Actor: Actor{Kind: ActorReaper}, At: d.now, Evidence: d.ev}
		assert.Contains(t, codes(d.rules.Judge(step)), CodeReservation, "time alone is no proof")
		d.finish(j)
		assert.Empty(t, d.rules.Judge(step), "a finished run after the grace")
		step.At = t0.Add(time.Hour)
		assert.Contains(t, codes(d.rules.Judge(step)), CodeReservation, "before the grace")
		step.At = d.now
		step.Actor = Actor{Kind: ActorRecover, Target: "another"}
		assert.Contains(t, codes(d.rules.Judge(step)), CodeReservation, "the operator named another reservation")
		step.Actor.Target = prev.Reservations[0].ReservationID
		assert.Empty(t, d.rules.Judge(step), "the operator named it")
	})

	t.Run("incident latch", func(t *testing.T) {
		d := newDriver(t, 5, cfgAt(5, 2, 0, 0))
		a, b := ident(1, "r1", 1), ident(2, "r2", 1)
		_, _, err := d.acquire(a)
		require.NoError(t, err)
		s, _, err := d.release(a, blocked)
		require.NoError(t, err)
		require.NotNil(t, d.st.ActiveIncident)
		require.Empty(t, d.rules.Judge(s))
		_, dec, err := d.acquire(b)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeAccountBlocked, dec.Outcome)
		// Admitting b anyway, or clearing the incident without naming it.
		admitted := d.st.Clone()
		admitted.Holders = append(admitted.Holders, holderOf(b, d.now, 0))
		assert.Contains(t, codes(d.rules.Judge(Step{Prev: d.st, Next: admitted, Actor: jobActor(b)})), CodeAdmissionIncident)
		cleared := d.st.Clone()
		cleared.ActiveIncident = nil
		assert.Contains(t, codes(d.rules.Judge(Step{Prev: d.st, Next: cleared, Actor: Actor{Kind: ActorRecoverIncident, Target: "incident-0"}})), CodeIncident)
		s, err = d.recoverIncident()
		require.NoError(t, err)
		assert.Empty(t, d.rules.Judge(s))
	})

	t.Run("direct handoff at schema 3", func(t *testing.T) {
		d := newDriver(t, 3, cfgAt(3, 1, 0, 0))
		a, b := ident(1, "r1", 1), ident(2, "r2", 1)
		_, _, err := d.acquire(a)
		require.NoError(t, err)
		_, _, err = d.acquire(b)
		require.NoError(t, err)
		s, _, err := d.release(a, confirmed)
		require.NoError(t, err)
		require.Equal(t, b.HolderID, d.st.Holders[0].HolderID, "handed to b")
		assert.Empty(t, d.rules.Judge(s), "a release that freed its own seat may hand it on")
		s.Actor = Actor{Kind: ActorReaper}
		assert.Contains(t, codes(d.rules.Judge(s)), CodeAdmissionUnauthorized, "the reaper never admits")
	})

	t.Run("migration needs a drained lock", func(t *testing.T) {
		d := newDriver(t, 5, cfgAt(5, 2, 0, 0))
		a := ident(1, "r1", 1)
		_, _, err := d.acquire(a)
		require.NoError(t, err)
		next := d.st.Clone()
		next.SchemaVersion = 6
		next.FencingToken = 1
		next.Holders[0].FencingToken = 1
		vs := d.rules.Judge(Step{Prev: d.st, Next: next, Actor: jobActor(a)})
		assert.Contains(t, codes(vs), CodeMigration, "verdict:%s", describe(vs))
	})

	t.Run("waiters keep their order", func(t *testing.T) {
		d := newDriver(t, 3, cfgAt(3, 1, 0, 0))
		for _, id := range []lockstate.Identity{ident(1, "r1", 1), ident(2, "r2", 1), ident(3, "r3", 1)} {
			s, _, err := d.acquire(id)
			require.NoError(t, err)
			require.Empty(t, d.rules.Judge(s))
		}
		require.Len(t, d.st.Queue, 2)
		swapped := d.st.Clone()
		swapped.Queue[0], swapped.Queue[1] = swapped.Queue[1], swapped.Queue[0]
		vs := d.rules.Judge(Step{Prev: d.st, Next: swapped, Actor: jobActor(ident(3, "r3", 1))})
		assert.Equal(t, []string{CodeQueueOrder}, codes(vs), "verdict:%s", describe(vs))
	})

	t.Run("a stale attempt does not take over its rerun's queue entry", func(t *testing.T) {
		d := newDriver(t, 3, cfgAt(3, 1, 0, 0))
		h, rerun := ident(1, "r1", 1), ident(2, "r2", 2)
		_, _, err := d.acquire(h)
		require.NoError(t, err)
		_, dec, err := d.acquire(rerun)
		require.NoError(t, err)
		require.Equal(t, lockstate.OutcomeQueued, dec.Outcome)
		stale := ident(2, "r2", 1)
		// The holder leaves and attempt 1 admits itself, consuming
		// attempt 2's entry.
		next := d.st.Clone()
		next.Holders = []lockstate.Holder{{Entry: d.st.Queue[0], AcquiredAt: lockstate.FormatTime(d.now), ExpiresAt: lockstate.FormatTime(d.now.Add(time.Hour))}}
		next.Holders[0].RunAttempt = "1"
		next.Queue = nil
		prev := d.st.Clone()
		prev.Holders = nil
		vs := d.rules.Judge(Step{Prev: prev, Next: next, Actor: jobActor(stale)})
		assert.Equal(t, []string{CodeRemovalUnauthorized}, codes(vs), "verdict:%s", describe(vs))
	})

	t.Run("escapes values from the state", func(t *testing.T) {
		d := newDriver(t, 2, cfgAt(2, 1, 0, 0))
		a := ident(1, "r1", 1)
		_, _, err := d.acquire(a)
		require.NoError(t, err)
		next := d.st.Clone()
		next.Holders = nil
		evil := Actor{Kind: ActorJob, HolderID: "x\n::error::injected", Attempt: "1"}
		vs := d.rules.Judge(Step{Prev: d.st, Next: next, Actor: evil})
		require.NotEmpty(t, vs)
		for _, v := range vs {
			assert.NotContains(t, v.Detail, "\n", "a value cannot start a new line")
		}
	})
}

func TestActorString(t *testing.T) {
	assert.Equal(t, "job:a:1:b:c@2#r", Actor{Kind: ActorJob, HolderID: "a:1:b:c", Attempt: "2", RunnerName: "r"}.String())
	assert.Equal(t, "recover(q-1)", Actor{Kind: ActorRecover, Target: "q-1"}.String())
	assert.Equal(t, "reaper", Actor{Kind: ActorReaper}.String())
	assert.Equal(t, "x: y", fmt.Sprint(Violation{Code: "x", Detail: "y"}))
	assert.Equal(t, Actor{Kind: ActorRecover, Target: "q"}, OperatorActor("recover", "q", "i"))
	assert.Equal(t, Actor{Kind: ActorRecoverIncident, Target: "i"}, OperatorActor("recover-incident", "q", "i"))
	assert.Equal(t, Actor{Kind: ActorReaper}, OperatorActor("reap", "q", "i"))
}

// TestIncidentRecoveryStaysWithinTheSeats: a job that holds no seat and
// releases with a blocked report raises the account incident; with every
// seat taken, recover-incident clears it without a recovery cooldown, so
// holders + reservations never exceed maxHolders (R-S1, divergence V5). The
// model found the reference's write (a cooldown on top of full seats) and
// refuses it, as the history audit does.
func TestIncidentRecoveryStaysWithinTheSeats(t *testing.T) {
	d := newDriver(t, 5, cfgAt(5, 1, 30, 0))
	holder, reporter := ident(1, "r1", 1), ident(2, "r2", 1)
	_, _, err := d.acquire(holder)
	require.NoError(t, err)
	s, _, err := d.release(reporter, blocked)
	require.NoError(t, err)
	require.Empty(t, d.rules.Judge(s), "raising the incident is legal")
	s, err = d.recoverIncident()
	require.NoError(t, err, "the pure core recovers the incident")
	assert.Nil(t, s.Next.ActiveIncident)
	assert.Equal(t, 1, len(s.Next.Holders)+len(s.Next.Reservations), "the holder's seat only")
	assert.Empty(t, d.rules.Judge(s))

	over := s.Next.Clone()
	over.ActiveIncident = nil
	over.Reservations = append(over.Reservations, lockstate.Reservation{
		ReservationID: "rec-ref", HolderID: "o/r:2:job:" + lockstate.IncidentRecoverySuffix, Repository: "o/r",
		Workflow: "w", Job: "job", RunID: "2", RunAttempt: "1", RunnerID: "r2",
		State: lockstate.ReservationCooldown, CreatedAt: s.Next.UpdatedAt, AvailableAt: s.Next.UpdatedAt,
	})
	ref := s
	ref.Next = over
	assert.Contains(t, codes(d.rules.Judge(ref)), CodeOverAdmission, "the reference's cooldown on top of full seats")
}
