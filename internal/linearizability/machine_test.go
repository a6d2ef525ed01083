package linearizability

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const machA, machB = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"

func onMachine(id lockstate.Identity, m string) lockstate.Identity {
	id.MachineID = m
	return id
}

func cfgMachine(schema, seats int) lockstate.Config {
	c := cfgAt(schema, seats, 0, 1)
	c.SerializeBy = lockstate.SerializeByMachine
	return c
}

// TestModelAcceptsMachineSerialization (soundness): every write of the
// pure core on a lock serialized by machine, with several runner agents
// per machine (acquires, releases that quarantine, reaps, reclaims by a
// sibling agent), is a legal step of the model.
func TestModelAcceptsMachineSerialization(t *testing.T) {
	reclaims := 0
	rapid.Check(t, func(rt *rapid.T) {
		schema := rapid.IntRange(4, 6).Draw(rt, "schema")
		d := newDriver(rt, schema, cfgMachine(schema, rapid.IntRange(1, 3).Draw(rt, "seats")))
		jobs := make([]lockstate.Identity, rapid.IntRange(2, 6).Draw(rt, "jobs"))
		for i := range jobs {
			jobs[i] = onMachine(ident(100+i, rapid.SampledFrom([]string{"a1", "a2", "a3", "b1"}).Draw(rt, "runner"), 1), rapid.SampledFrom([]string{machA, machB}).Draw(rt, "machine"))
		}
		for n := rapid.IntRange(1, 40).Draw(rt, "ops"); n > 0; n-- {
			d.now = d.now.Add(time.Duration(rapid.IntRange(0, 30).Draw(rt, "minutes")) * time.Minute)
			id := jobs[rapid.IntRange(0, len(jobs)-1).Draw(rt, "job")]
			var s Step
			var ok bool
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1, 2:
				step, dec, err := d.acquire(id)
				s, ok = step, err == nil && dec.Changed
				if ok && dec.QuarantineRecovered && dec.ConsumedQuarantine.RunnerID != id.RunnerID {
					reclaims++
				}
			case 3, 4:
				report := rapid.SampledFrom([]lockstate.Report{confirmed, unproven}).Draw(rt, "report")
				step, dec, err := d.release(id, report)
				s, ok = step, err == nil && dec.Changed
			case 5:
				d.finish(id)
				s, ok = d.reap()
			}
			if !ok {
				continue
			}
			if vs := d.rules.Judge(s); len(vs) > 0 {
				rt.Fatalf("the model refused a write of the pure core by %s:%s\nprev: %s\nnext: %s", s.Actor, describe(vs), summarize(s.Prev), summarize(s.Next))
			}
		}
	})
	assert.Positive(t, reclaims, "schedules reach a sibling agent's reclaim")
}

// TestModelRefusesTwoSeatsOnOneMachine: an admission that gives a second
// seat to a machine (the rules keyed on the runner name again) is refused.
func TestModelRefusesTwoSeatsOnOneMachine(t *testing.T) {
	d := newDriver(t, 6, cfgMachine(6, 2))
	h, w := onMachine(ident(1, "a1", 1), machA), onMachine(ident(2, "a2", 1), machA)
	_, dec, err := d.acquire(h)
	require.NoError(t, err)
	require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
	_, dec, err = d.acquire(w)
	require.NoError(t, err)
	require.Equal(t, lockstate.OutcomeQueued, dec.Outcome, "its machine holds a seat")
	base := d.st
	next := base.Clone()
	next.Queue = nil
	next.FencingToken++
	next.Holders = append(next.Holders, lockstate.Holder{Entry: base.Queue[0], AcquiredAt: lockstate.FormatTime(d.now), ExpiresAt: lockstate.FormatTime(d.now.Add(time.Hour)), FencingToken: next.FencingToken})
	vs := d.rules.Judge(Step{Prev: base, Next: next, Actor: jobActor(w), At: d.now})
	assert.Contains(t, codes(vs), CodeMachineSerialization, describe(vs))
}
