package machinequeue

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// job is the model of one job on the machine.
type job struct {
	id            string
	k             int
	owner, waiter Process
	seq           int // join order
	slot          int // while holding
	gone          bool
}

type qsim struct {
	t     *rapid.T
	s     *State
	now   time.Time
	jobs  []*job
	dead  map[Process]bool
	seq   int
	pids  int
	stats *qstats
}

type qstats struct{ admissions, reclaims, conflicts, handoffs int }

func (m *qsim) newProc() Process {
	m.pids++
	return Process{PID: m.pids, Start: fmt.Sprintf("t%d", m.pids)}
}

// evidence is what an honest OS layer may say: a dead process is Dead or
// (cannot tell) Unknown, a live one Alive or Unknown, never Dead.
func (m *qsim) evidence() Evidence {
	ev := Evidence{}
	for _, p := range Processes(m.s) {
		unknown := rapid.IntRange(0, 9).Draw(m.t, "unknown") == 0
		switch {
		case unknown:
		case m.dead[p]:
			ev[p] = VerdictDead
		default:
			ev[p] = VerdictAlive
		}
	}
	return ev
}

func (m *qsim) byID(id string) *job {
	for _, j := range m.jobs {
		if j.id == id && !j.gone {
			return j
		}
	}
	return nil
}

// check applies one transition's result and verifies every invariant.
func (m *qsim) check(in, out *State, changed bool, ev Evidence, released string, c Changes) {
	t := m.t
	before, err := Encode(in)
	require.NoError(t, err)
	require.NoError(t, Validate(out))
	data, err := Encode(out)
	require.NoError(t, err)
	back, err := Decode(data)
	require.NoError(t, err)
	require.Equal(t, out, back, "decode(encode(s)) == s")
	if !changed {
		require.Equal(t, string(before), string(data), "Changed=false but the state differs")
	}
	// Capacity.
	for _, h := range out.Holders {
		require.LessOrEqual(t, len(out.Holders), h.Slots, "more holders than %s's K", h.HolderID)
	}
	// Work conserving: the head is never admissible after a write.
	if len(out.Queue) > 0 {
		require.False(t, admissible(out, out.Queue[0]), "a slot idles while the head waits")
	}
	// No entry with a process the evidence proved dead survives.
	for _, p := range Processes(out) {
		require.NotEqual(t, VerdictDead, ev[p], "entry with dead process %v kept", p)
	}
	inIDs := map[string]bool{}
	for _, h := range in.Holders {
		inIDs[h.HolderID] = true
	}
	for _, w := range in.Queue {
		inIDs[w.HolderID] = true
	}
	outHolders := map[string]Holder{}
	for _, h := range out.Holders {
		outHolders[h.HolderID] = h
	}
	outIDs := map[string]bool{}
	for id := range outHolders {
		outIDs[id] = true
	}
	for _, w := range out.Queue {
		outIDs[w.HolderID] = true
	}
	// Every removal is the release asked for or a proven-dead reclaim.
	for id := range inIDs {
		if outIDs[id] || id == released {
			continue
		}
		j := m.byID(id)
		require.NotNil(t, j)
		require.True(t, ev[j.owner] == VerdictDead || ev[j.waiter] == VerdictDead && !isHolder(in, id), "entry %s removed without proof", id)
	}
	// Queue order is join order.
	for i := 1; i < len(out.Queue); i++ {
		require.Less(t, m.byID(out.Queue[i-1].HolderID).seq, m.byID(out.Queue[i].HolderID).seq, "queue out of join order")
	}
	// FIFO admission and stable slots.
	for _, h := range out.Holders {
		j := m.byID(h.HolderID)
		require.NotNil(t, j)
		if j.slot != 0 {
			require.Equal(t, j.slot, h.Slot, "slot of %s changed while held", h.HolderID)
			continue
		}
		for _, w := range out.Queue {
			require.Greater(t, m.byID(w.HolderID).seq, j.seq, "%s admitted before earlier waiter %s", h.HolderID, w.HolderID)
		}
		j.slot = h.Slot
		m.stats.admissions++
	}
	// Model bookkeeping: who left.
	for _, j := range m.jobs {
		if !j.gone && !outIDs[j.id] && inIDs[j.id] {
			j.gone = true
		}
	}
	m.stats.reclaims += len(c.Reclaimed)
	if released != "" && len(c.Admitted) > 0 {
		m.stats.handoffs++
	}
	m.s = out
}

func isHolder(s *State, id string) bool {
	h, _ := Find(s, id)
	return h != nil
}

func (m *qsim) live() []*job {
	var out []*job
	for _, j := range m.jobs {
		if !j.gone {
			out = append(out, j)
		}
	}
	return out
}

func TestQueueProperties(t *testing.T) {
	t.Parallel()
	stats := &qstats{}
	rapid.Check(t, func(rt *rapid.T) {
		m := &qsim{t: rt, s: New(), now: t0, dead: map[Process]bool{}, stats: stats}
		baseK := rapid.IntRange(1, 4).Draw(rt, "K")
		steps := rapid.IntRange(1, 80).Draw(rt, "steps")
		for range steps {
			m.now = m.now.Add(time.Duration(rapid.IntRange(0, 5000).Draw(rt, "dt")) * time.Millisecond)
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op <= 2: // a new job arrives
				k := baseK
				if rapid.IntRange(0, 5).Draw(rt, "otherK") == 0 {
					k = rapid.IntRange(1, 5).Draw(rt, "k")
				}
				m.seq++
				j := &job{id: fmt.Sprintf("job-%d", m.seq), k: k, owner: m.newProc(), waiter: m.newProc(), seq: m.seq}
				ev := m.evidence()
				out, dec, err := Take(m.s, TakeRequest{HolderID: j.id, Slots: k, Owner: j.owner, Waiter: j.waiter}, ev, m.now)
				if CodeOf(err) == CodeQueueFull {
					continue
				}
				require.NoError(rt, err)
				m.jobs = append(m.jobs, j)
				require.True(rt, dec.Changed)
				m.check(m.s, out, dec.Changed, ev, "", dec.Changes)
			case op <= 4: // a live job polls
				live := m.live()
				if len(live) == 0 {
					continue
				}
				j := rapid.SampledFrom(live).Draw(rt, "poller")
				if m.dead[j.owner] || m.dead[j.waiter] {
					continue
				}
				ev := m.evidence()
				out, dec, err := Take(m.s, TakeRequest{HolderID: j.id, Slots: j.k, Owner: j.owner, Waiter: j.waiter}, ev, m.now)
				require.NoError(rt, err)
				m.check(m.s, out, dec.Changed, ev, "", dec.Changes)
			case op <= 6: // a job releases
				live := m.live()
				if len(live) == 0 {
					continue
				}
				j := rapid.SampledFrom(live).Draw(rt, "releaser")
				ev := m.evidence()
				if m.dead[j.owner] {
					ev[j.owner] = VerdictDead
				}
				out, dec, err := Release(m.s, ReleaseRequest{HolderID: j.id, Owner: j.owner}, ev, m.now)
				require.NoError(rt, err)
				m.check(m.s, out, dec.Changed, ev, j.id, dec.Changes)
				j.gone = true
			case op == 7: // a process dies
				live := m.live()
				if len(live) == 0 {
					continue
				}
				j := rapid.SampledFrom(live).Draw(rt, "victim")
				if rapid.Bool().Draw(rt, "owner") {
					m.dead[j.owner] = true
				} else {
					m.dead[j.waiter] = true
				}
			case op == 8: // someone else's release is refused and changes nothing
				live := m.live()
				if len(live) == 0 {
					continue
				}
				j := rapid.SampledFrom(live).Draw(rt, "target")
				ev := m.evidence()
				if ev[j.owner] == VerdictDead || (ev[j.waiter] == VerdictDead && !isHolder(m.s, j.id)) {
					continue
				}
				out, _, err := Release(m.s, ReleaseRequest{HolderID: j.id, Owner: m.newProc()}, ev, m.now)
				require.Equal(rt, CodeHolderConflict, CodeOf(err))
				require.Nil(rt, out)
				m.stats.conflicts++
			default: // a waiting poll found a dead process
				ev := m.evidence()
				out, dec, err := Reclaim(m.s, ev, m.now)
				require.NoError(rt, err)
				require.Equal(rt, NeedsWrite(m.s, ev), dec.Changed)
				m.check(m.s, out, dec.Changed, ev, "", dec.Changes)
			}
		}
	})
	// The schedules must reach what the invariants are about.
	require.Positive(t, stats.admissions)
	require.Positive(t, stats.reclaims)
	require.Positive(t, stats.conflicts)
	require.Positive(t, stats.handoffs)
}
