package machinequeue

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func proc(pid int) Process { return Process{PID: pid, Start: "test:" + strconv.Itoa(pid)} }

func holder(id string, slot, k, pid int) Holder {
	return Holder{HolderID: id, Slot: slot, Slots: k, Owner: proc(pid), QueuedAt: FormatTime(t0), AdmittedAt: FormatTime(t0)}
}

func waiter(id string, k, pid int) Waiter {
	return Waiter{HolderID: id, Slots: k, Owner: proc(pid), Waiter: proc(pid + 1000), QueuedAt: FormatTime(t0)}
}

func state(hs []Holder, ws []Waiter) *State {
	s := New()
	s.Holders = append(s.Holders, hs...)
	s.Queue = append(s.Queue, ws...)
	return s
}

func take(id string, k, pid int) TakeRequest {
	return TakeRequest{HolderID: id, Slots: k, Owner: proc(pid), Waiter: proc(pid + 1000)}
}

func holderIDs(s *State) (hs, ws []string) {
	for _, h := range s.Holders {
		hs = append(hs, h.HolderID)
	}
	for _, w := range s.Queue {
		ws = append(ws, w.HolderID)
	}
	return hs, ws
}

func TestTake(t *testing.T) {
	t.Parallel()
	now := t0.Add(90 * time.Second)
	cases := []struct {
		name     string
		s        *State
		req      TakeRequest
		ev       Evidence
		outcome  TakeOutcome
		changed  bool
		position int
		slot     int
		holders  []string
		queue    []string
		code     Code
	}{
		{name: "empty queue admits at once into slot 1", s: New(), req: take("a", 2, 1),
			outcome: TakeAdmitted, changed: true, slot: 1, holders: []string{"a"}},
		{name: "a free slot admits into the lowest free number", s: state([]Holder{holder("x", 2, 3, 5)}, nil), req: take("a", 3, 1),
			outcome: TakeAdmitted, changed: true, slot: 1, holders: []string{"x", "a"}},
		{name: "full: the caller queues at the tail", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("w", 1, 6)}), req: take("a", 1, 1),
			outcome: TakeQueued, changed: true, position: 2, holders: []string{"x"}, queue: []string{"w", "a"}},
		{name: "a waiting poll writes nothing and keeps its place", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("a", 1, 1), waiter("w", 1, 6)}), req: take("a", 1, 1),
			outcome: TakeQueued, changed: false, position: 1, holders: []string{"x"}, queue: []string{"a", "w"}},
		{name: "a new waiting process of the same owner keeps the place and is recorded",
			s:   state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("w", 1, 6), waiter("a", 1, 1)}),
			req: TakeRequest{HolderID: "a", Slots: 1, Owner: proc(1), Waiter: proc(77)}, outcome: TakeQueued, changed: true, position: 2,
			holders: []string{"x"}, queue: []string{"w", "a"}},
		{name: "strict FIFO: a head blocked by its own K is not overtaken by a caller with a larger K",
			s:   state([]Holder{holder("x", 1, 2, 5)}, []Waiter{waiter("w", 1, 6)}),
			req: take("a", 2, 1), outcome: TakeQueued, changed: true, position: 2, holders: []string{"x"}, queue: []string{"w", "a"}},
		{name: "the smaller K of a holder caps admission", s: state([]Holder{holder("x", 1, 1, 5)}, nil), req: take("a", 4, 1),
			outcome: TakeQueued, changed: true, position: 1, holders: []string{"x"}, queue: []string{"a"}},
		{name: "the caller's own smaller K caps admission", s: state([]Holder{holder("x", 1, 4, 5), holder("y", 2, 4, 6)}, nil), req: take("a", 2, 1),
			outcome: TakeQueued, changed: true, position: 1, holders: []string{"x", "y"}, queue: []string{"a"}},
		{name: "already a holder: the stored slot, nothing written", s: state([]Holder{holder("x", 1, 2, 5), holder("a", 2, 2, 1)}, nil), req: take("a", 2, 1),
			outcome: TakeAlreadyHolder, changed: false, slot: 2, holders: []string{"x", "a"}},
		{name: "a dead holder is reclaimed and its slot handed to the head, then the caller queues",
			s:  state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("w", 1, 6)}),
			ev: Evidence{proc(5): VerdictDead}, req: take("a", 1, 1),
			outcome: TakeQueued, changed: true, position: 1, holders: []string{"w"}, queue: []string{"a"}},
		{name: "a dead waiting process drops its entry and the caller moves up",
			s:  state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("w", 1, 6)}),
			ev: Evidence{proc(1006): VerdictDead}, req: take("a", 1, 1),
			outcome: TakeQueued, changed: true, position: 1, holders: []string{"x"}, queue: []string{"a"}},
		{name: "unknown liveness keeps the holder", s: state([]Holder{holder("x", 1, 1, 5)}, nil),
			ev: Evidence{proc(5): VerdictUnknown}, req: take("a", 1, 1),
			outcome: TakeQueued, changed: true, position: 1, holders: []string{"x"}, queue: []string{"a"}},
		{name: "the caller's own dead holder entry is reclaimed; it re-joins with a new owner",
			s:  state([]Holder{holder("a", 1, 1, 9)}, nil),
			ev: Evidence{proc(9): VerdictDead}, req: take("a", 1, 1),
			outcome: TakeAdmitted, changed: true, slot: 1, holders: []string{"a"}},
		{name: "another live owner holds the holder id", s: state([]Holder{holder("a", 1, 2, 9)}, nil), req: take("a", 2, 1), code: CodeHolderConflict},
		{name: "another live owner waits under the holder id", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("a", 1, 9)}), req: take("a", 1, 1), code: CodeHolderConflict},
		{name: "a dead caller is refused", s: New(), req: take("a", 1, 1), ev: Evidence{proc(1): VerdictDead}, code: CodeOwnerDead},
		{name: "K 0 is refused", s: New(), req: take("a", 0, 1), code: CodeInvalidRequest},
		{name: "K 65 is refused", s: New(), req: take("a", 65, 1), code: CodeInvalidRequest},
		{name: "an empty holder id is refused", s: New(), req: take("", 1, 1), code: CodeInvalidRequest},
		{name: "a control character in the holder id is refused", s: New(), req: take("a\nb", 1, 1), code: CodeInvalidRequest},
		{name: "an owner without start time is refused", s: New(), req: TakeRequest{HolderID: "a", Slots: 1, Owner: Process{PID: 3}, Waiter: proc(1)}, code: CodeInvalidRequest},
		{name: "an invalid state is refused", s: &State{Format: Format, Version: Version}, req: take("a", 1, 1), code: CodeCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, err := Encode(tc.s)
			if tc.code != CodeCorrupt {
				require.NoError(t, err)
			}
			out, dec, err := Take(tc.s, tc.req, tc.ev, now)
			if tc.code != "" {
				require.Error(t, err)
				assert.Equal(t, tc.code, CodeOf(err))
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.outcome, dec.Outcome)
			assert.Equal(t, tc.changed, dec.Changed)
			assert.Equal(t, tc.position, dec.Position)
			if tc.slot != 0 {
				require.NotNil(t, dec.Holder)
				assert.Equal(t, tc.slot, dec.Holder.Slot)
			}
			hs, ws := holderIDs(out)
			assert.Equal(t, tc.holders, hs)
			assert.Equal(t, tc.queue, ws)
			require.NoError(t, Validate(out))
			after, err := Encode(tc.s)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the input state was modified")
		})
	}
}

func TestTakeRecordsTheWait(t *testing.T) {
	t.Parallel()
	s := state([]Holder{holder("x", 1, 1, 5)}, nil)
	s, dec, err := Take(s, take("a", 1, 1), nil, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, TakeQueued, dec.Outcome)
	s, rel, err := Release(s, ReleaseRequest{HolderID: "x", Owner: proc(5)}, nil, t0.Add(4*time.Second))
	require.NoError(t, err)
	assert.Equal(t, ReleaseFreed, rel.Outcome)
	assert.Equal(t, []string{"a"}, rel.Admitted, "the release hands the slot to the head in its own write")
	_, dec, err = Take(s, take("a", 1, 1), nil, t0.Add(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, TakeAlreadyHolder, dec.Outcome)
	assert.False(t, dec.Changed, "noticing a handoff writes nothing")
	assert.Equal(t, 1, dec.Holder.Slot)
	assert.Equal(t, FormatTime(t0.Add(time.Second)), dec.Holder.QueuedAt)
	assert.Equal(t, FormatTime(t0.Add(4*time.Second)), dec.Holder.AdmittedAt)
}

func TestAdmissionNeverPrecedesQueueing(t *testing.T) {
	t.Parallel()
	s := state([]Holder{holder("x", 1, 1, 5)}, nil)
	s, _, err := Take(s, take("a", 1, 1), nil, t0.Add(time.Minute))
	require.NoError(t, err)
	// The machine clock stepped back a minute before the release.
	s, _, err = Release(s, ReleaseRequest{HolderID: "x", Owner: proc(5)}, nil, t0)
	require.NoError(t, err)
	require.Len(t, s.Holders, 1)
	assert.Equal(t, s.Holders[0].QueuedAt, s.Holders[0].AdmittedAt)
	require.NoError(t, Validate(s))
}

func TestRelease(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	cases := []struct {
		name    string
		s       *State
		req     ReleaseRequest
		ev      Evidence
		outcome ReleaseOutcome
		changed bool
		holders []string
		queue   []string
		slots   []int
		code    Code
	}{
		{name: "frees the slot and hands it to the head", s: state([]Holder{holder("a", 1, 2, 1), holder("x", 2, 2, 5)}, []Waiter{waiter("w", 2, 6), waiter("v", 2, 7)}),
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, outcome: ReleaseFreed, changed: true,
			holders: []string{"x", "w"}, queue: []string{"v"}, slots: []int{2, 1}},
		{name: "removes a queue entry", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("a", 1, 1), waiter("w", 1, 6)}),
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, outcome: ReleaseDequeued, changed: true,
			holders: []string{"x"}, queue: []string{"w"}, slots: []int{1}},
		{name: "nothing to release writes nothing", s: state([]Holder{holder("x", 1, 1, 5)}, nil),
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, outcome: ReleaseNotFound, changed: false, holders: []string{"x"}, slots: []int{1}},
		{name: "nothing to release still reclaims a dead holder", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("w", 1, 6)}),
			ev:  Evidence{proc(5): VerdictDead},
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, outcome: ReleaseNotFound, changed: true, holders: []string{"w"}, slots: []int{1}},
		{name: "another owner's slot is refused", s: state([]Holder{holder("a", 1, 1, 9)}, nil),
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, code: CodeHolderConflict},
		{name: "another owner's queue entry is refused", s: state([]Holder{holder("x", 1, 1, 5)}, []Waiter{waiter("a", 1, 9)}),
			req: ReleaseRequest{HolderID: "a", Owner: proc(1)}, code: CodeHolderConflict},
		{name: "an owner without pid is refused", s: New(), req: ReleaseRequest{HolderID: "a", Owner: Process{Start: "x"}}, code: CodeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, dec, err := Release(tc.s, tc.req, tc.ev, now)
			if tc.code != "" {
				assert.Equal(t, tc.code, CodeOf(err))
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.outcome, dec.Outcome)
			assert.Equal(t, tc.changed, dec.Changed)
			hs, ws := holderIDs(out)
			assert.Equal(t, tc.holders, hs)
			assert.Equal(t, tc.queue, ws)
			var slots []int
			for _, h := range out.Holders {
				slots = append(slots, h.Slot)
			}
			assert.Equal(t, tc.slots, slots)
			require.NoError(t, Validate(out))
		})
	}
}

func TestReclaim(t *testing.T) {
	t.Parallel()
	s := state([]Holder{holder("x", 1, 2, 5), holder("y", 2, 2, 6)}, []Waiter{waiter("w", 2, 7), waiter("v", 2, 8), waiter("u", 2, 9)})
	ev := Evidence{proc(5): VerdictDead, proc(6): VerdictAlive, proc(1008): VerdictDead, proc(7): VerdictUnknown}
	require.True(t, NeedsWrite(s, ev))
	out, dec, err := Reclaim(s, ev, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.True(t, dec.Changed)
	assert.Equal(t, []Reclaimed{{HolderID: "x", Holding: true, Slot: 1, Dead: proc(5)}, {HolderID: "v", Dead: proc(1008)}}, dec.Reclaimed)
	assert.Equal(t, []string{"w"}, dec.Admitted)
	hs, ws := holderIDs(out)
	assert.Equal(t, []string{"y", "w"}, hs)
	assert.Equal(t, []string{"u"}, ws)
	assert.Equal(t, 1, out.Holders[1].Slot, "the freed slot number is reused")

	_, dec, err = Reclaim(out, Evidence{proc(6): VerdictAlive}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.False(t, dec.Changed)
	assert.False(t, NeedsWrite(out, Evidence{proc(6): VerdictAlive}))
	assert.ElementsMatch(t, []Process{proc(6), proc(7), proc(9), proc(1009)}, Processes(out))
}

func TestNeedsWriteSeesAnAdmissibleHead(t *testing.T) {
	t.Parallel()
	// Only a state written by someone else's rules (or by hand) can have an
	// admissible head; a waiting poll must then write.
	s := state(nil, []Waiter{waiter("w", 1, 7)})
	assert.True(t, NeedsWrite(s, nil))
	out, dec, err := Reclaim(s, nil, t0)
	require.NoError(t, err)
	assert.Equal(t, []string{"w"}, dec.Admitted)
	assert.Len(t, out.Holders, 1)
}
