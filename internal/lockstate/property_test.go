package lockstate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// configs are the valid lock configs a simulation moves between.
var propConfigs = []Config{
	{MaxHolders: 1, ReleaseCooldownSeconds: 360},
	{MaxHolders: 2, ReleaseCooldownSeconds: 60},
	{MaxHolders: 3, RunnerSerialization: true, ReleaseCooldownSeconds: 30},
	{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, ReleaseCooldownSeconds: 120},
	{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, ReleaseCooldownSeconds: 0},
	{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 45},
	{MaxHolders: 4, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 0},
}

// tolerated are refusals a random schedule legitimately provokes.
var tolerated = map[Code]bool{
	CodeStaleRunAttempt: true, CodeConflictingIdentity: true, CodeHolderEarlierAttempt: true,
	CodeDrainRequired: true, CodeMigrationStepRequired: true, CodeRunnerConflict: true,
	CodeReservationNotFound: true, CodeIncidentNotFound: true, CodeSchemaTooOld: true,
	CodeInvalidQuarantineRestore: true,
}

type sim struct {
	t        *rapid.T
	s        *State
	cfg      Config
	now      time.Time
	ids      []Identity
	consumed map[string]*Reservation
	nextID   int
}

func (m *sim) check(err error) bool {
	if err == nil {
		return true
	}
	code := CodeOf(err)
	if !tolerated[code] {
		m.t.Fatalf("unexpected error %q: %v", code, err)
	}
	return false
}

func queueIDs(s *State) map[string]int {
	out := map[string]int{}
	for i, e := range s.Queue {
		if _, ok := out[e.HolderID]; !ok {
			out[e.HolderID] = i
		}
	}
	return out
}

// invariants checks what must hold for every state ever produced.
func (m *sim) invariants(s *State) {
	data, err := Encode(s)
	if err != nil {
		m.t.Fatalf("encode: %v", err)
	}
	back, err := Decode(data, DecodeOptions{Lock: s.Lock})
	if err != nil {
		m.t.Fatalf("decode own output: %v\n%s", err, data)
	}
	require.Equal(m.t, s, back)
	seen := map[string]bool{}
	for _, e := range s.Queue {
		if seen[e.HolderID] {
			m.t.Fatalf("duplicate queue entry %s", e.HolderID)
		}
		seen[e.HolderID] = true
	}
}

// lostOnly asserts that only holderID may have left the queue.
func (m *sim) lostOnly(before, after *State, holderID string) {
	afterIDs := queueIDs(after)
	for id := range queueIDs(before) {
		if _, ok := afterIDs[id]; !ok && id != holderID {
			m.t.Fatalf("queue entry %s lost by a transition for %s", id, holderID)
		}
	}
}

func (m *sim) acquire(i int) {
	id := m.ids[i]
	before := m.s.Clone()
	out, d, err := Acquire(m.s, m.cfg, AcquireRequest{Identity: id, Lease: time.Hour}, m.now)
	require.Equal(m.t, before, m.s, "Acquire mutated its input")
	if !m.check(err) {
		return
	}
	if !d.Changed {
		require.Equal(m.t, m.s, out)
	}
	m.invariants(out)
	m.lostOnly(before, out, id.HolderID)
	if d.Outcome == OutcomeAdmitted {
		if got := len(out.Holders) + len(out.Reservations); got > m.cfg.MaxHolders {
			m.t.Fatalf("admission exceeded capacity: %d > %d", got, m.cfg.MaxHolders)
		}
		h := out.Holders[HolderIndex(out, id.HolderID)]
		pos, queued := queueIDs(before)[id.HolderID]
		if out.SchemaVersion >= 3 {
			for j, e := range before.Queue {
				if e.RunnerID == h.RunnerID && e.HolderID != id.HolderID && (!queued || j < pos) {
					m.t.Fatalf("FIFO per runner violated: %s admitted before %s on %s", id.HolderID, e.HolderID, h.RunnerID)
				}
			}
		} else if queued {
			pruned, _ := PruneExpiredCooldowns(before, m.now)
			if pos >= FreeSlots(pruned, m.cfg) {
				m.t.Fatalf("FIFO violated: %s admitted from position %d", id.HolderID, pos)
			}
		}
		if d.ConsumedQuarantine != nil {
			m.consumed[id.HolderID] = d.ConsumedQuarantine
		}
	}
	m.s = out
}

func (m *sim) cleanup(i int, report Report, queueOnly, preActivation bool) {
	id := m.ids[i]
	m.nextID++
	req := CleanupRequest{
		HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID, Report: report,
		QueueOnly: queueOnly, PreActivation: preActivation, ReservationID: fmt.Sprintf("res-%d", m.nextID), Identity: id,
	}
	if preActivation {
		req.RestoreQuarantine = m.consumed[id.HolderID]
	}
	before := m.s.Clone()
	out, d, err := Cleanup(m.s, m.cfg, req, m.now)
	require.Equal(m.t, before, m.s, "Cleanup mutated its input")
	if !m.check(err) {
		return
	}
	if !d.Changed {
		require.Equal(m.t, m.s, out)
	}
	m.invariants(out)
	m.lostOnly(before, out, id.HolderID)
	for _, h := range before.Holders {
		if h.HolderID != id.HolderID && HolderIndex(out, h.HolderID) < 0 {
			m.t.Fatalf("cleanup for %s removed holder %s", id.HolderID, h.HolderID)
		}
	}
	delete(m.consumed, id.HolderID)
	m.s = out
}

func (m *sim) recover(pickQuarantine bool) {
	before := m.s.Clone()
	var out *State
	var err error
	if pickQuarantine {
		rid := ""
		for _, r := range m.s.Reservations {
			if r.State == ReservationQuarantine {
				rid = r.ReservationID
			}
		}
		if rid == "" {
			return
		}
		out, _, err = RecoverQuarantine(m.s, m.cfg, rid, m.now)
	} else {
		if m.s.ActiveIncident == nil {
			return
		}
		m.nextID++
		out, _, err = RecoverIncident(m.s, m.cfg, m.s.ActiveIncident.IncidentID, m.now, fmt.Sprintf("res-%d", m.nextID))
	}
	require.Equal(m.t, before, m.s, "recovery mutated its input")
	if !m.check(err) {
		return
	}
	m.invariants(out)
	m.lostOnly(before, out, "")
	m.s = out
}

func TestPropertyTransitions(t *testing.T) {
	t.Parallel()
	reports := []Report{{}, confirmed, unproven, blocked, DegradedReport()}
	rapid.Check(t, func(rt *rapid.T) {
		runners := rapid.IntRange(1, 6).Draw(rt, "runners")
		n := rapid.IntRange(1, 8).Draw(rt, "identities")
		start := rapid.IntRange(2, MaxSchemaVersion).Draw(rt, "schema")
		m := &sim{t: rt, s: stateAt(start), cfg: propConfigs[[]int{0, 2, 3, 5}[start-2]], now: t0, consumed: map[string]*Reservation{}}
		for i := range n {
			id := ident(i+1, fmt.Sprintf("runner-%d", rapid.IntRange(1, runners).Draw(rt, "runner")))
			m.ids = append(m.ids, id)
		}
		steps := rapid.IntRange(1, 80).Draw(rt, "steps")
		for range steps {
			i := rapid.IntRange(0, n-1).Draw(rt, "who")
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2, 3:
				m.acquire(i)
			case 4, 5:
				m.cleanup(i, rapid.SampledFrom(reports).Draw(rt, "report"), rapid.Bool().Draw(rt, "queueOnly"), rapid.IntRange(0, 4).Draw(rt, "pre") == 0)
			case 6:
				m.cfg = rapid.SampledFrom(propConfigs).Draw(rt, "config")
			case 7:
				m.now = m.now.Add(time.Duration(rapid.IntRange(0, 400).Draw(rt, "advance")) * time.Second)
			case 8:
				id := m.ids[i]
				id.RunAttempt = fmt.Sprint(rapid.IntRange(1, 3).Draw(rt, "attempt"))
				if rapid.Bool().Draw(rt, "moveRunner") {
					id.RunnerID = fmt.Sprintf("runner-%d", rapid.IntRange(1, runners).Draw(rt, "newRunner"))
				}
				m.ids[i] = id
			case 9:
				m.recover(rapid.Bool().Draw(rt, "quarantine"))
			}
		}
	})
}
