package lockstate

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// configs are the valid lock configs a simulation moves between. Configs
// without fencedAdmission still bound overtaking once the state reached
// schema 6 (MaxOvertakes is read at every schema).
var propConfigs = []Config{
	{MaxHolders: 1, ReleaseCooldownSeconds: 360},
	{MaxHolders: 2, ReleaseCooldownSeconds: 60, MaxOvertakes: 1},
	{MaxHolders: 3, RunnerSerialization: true, ReleaseCooldownSeconds: 30, MaxOvertakes: 2},
	{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, ReleaseCooldownSeconds: 120},
	{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, ReleaseCooldownSeconds: 0, MaxOvertakes: 3},
	{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 45},
	{MaxHolders: 4, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 0, MaxOvertakes: 2},
	{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, ReleaseCooldownSeconds: 0, MaxOvertakes: 1},
	{MaxHolders: 4, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, ReleaseCooldownSeconds: 20, MaxOvertakes: 2},
	{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, ReleaseCooldownSeconds: 0, MaxOvertakes: 0},
}

// startConfig is the config a simulation starting at schema uses first.
var startConfig = map[int]int{2: 0, 3: 2, 4: 3, 5: 5, 6: 7}

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
	// issued holds every fencing token handed out; lastToken the largest.
	issued    map[int64]bool
	lastToken int64
	// overtaken is the model of each waiting entry's overtakes, counted
	// independently: an admission (other than a reclaim) of an entry behind
	// W while W could not have been admitted had it polled instead.
	overtaken map[string]int
	stats     *simStats
	// arrivals are the identities' arrival snapshots (arrival insertion);
	// handoffs counts admissions by Handoff.
	arrivals map[string]*Arrival
}

// simStats counts schema-6 events across a property test so the test can
// prove its schedules reach them (a checker that never sees an overtake
// cannot fail on one).
type simStats struct {
	admissions, migrations, overtakes, exhausted atomic.Int64
	// upgrades counts upgrades written; paused counts acquires that waited
	// for a pending upgrade to drain.
	upgrades, paused atomic.Int64
}

// entryIdentity is the identity that wrote e (its own poll changes nothing).
func entryIdentity(e Entry) Identity {
	runner := e.RunnerID
	if runner == "" {
		// A schema-2 waiter of a pending upgrade recorded the runner id its
		// own poll would give.
		runner = e.PendingRunnerID
	}
	return Identity{
		HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job, RunID: e.RunID,
		RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: runner, JobID: e.JobID,
	}
}

// fencing checks what every transition must keep: schema and counter never
// go back, holder tokens were issued by observed admissions, and the stored
// overtakes equal the model. It forgets entries that left the queue.
func (m *sim) fencing(before, after *State) {
	if after.SchemaVersion < before.SchemaVersion {
		m.t.Fatalf("schema downgraded from %d to %d", before.SchemaVersion, after.SchemaVersion)
	}
	if after.FencingToken < before.FencingToken {
		m.t.Fatalf("fencing counter went back from %d to %d", before.FencingToken, after.FencingToken)
	}
	for _, h := range after.Holders {
		if after.SchemaVersion >= FencedSchemaVersion && !m.issued[h.FencingToken] {
			m.t.Fatalf("holder %s carries token %d that no admission issued", h.HolderID, h.FencingToken)
		}
	}
	queued := map[string]bool{}
	for _, e := range after.Queue {
		queued[e.HolderID] = true
		if e.Overtakes != m.overtaken[e.HolderID] {
			m.t.Fatalf("entry %s stores overtakes %d, the model counted %d", e.HolderID, e.Overtakes, m.overtaken[e.HolderID])
		}
	}
	for id := range m.overtaken {
		if !queued[id] {
			delete(m.overtaken, id)
		}
	}
}

// wouldAdmit reports whether e's own poll would have been admitted on s.
func (m *sim) wouldAdmit(s *State, e Entry) bool {
	_, d, err := Acquire(s, m.cfg, AcquireRequest{Identity: entryIdentity(e), Lease: time.Hour}, m.now)
	return err == nil && d.Outcome == OutcomeAdmitted
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

// upgraded checks the upgrade rules of one transition: the schema never
// goes down; it goes up only by an upgrade (migratedTo) to exactly the
// schema the config asks for, written on a lock with nothing left to drain
// (no holder other than one admitted in the same write; no reservation
// when the step adds the incident or fencing to a schema-4+ lock, other
// than one the same write created), and the queue keeps its relative order.
func (m *sim) upgraded(before, out *State, migratedTo int) {
	switch {
	case out.SchemaVersion < before.SchemaVersion:
		m.t.Fatalf("schema downgraded %d -> %d", before.SchemaVersion, out.SchemaVersion)
	case out.SchemaVersion > before.SchemaVersion && migratedTo != out.SchemaVersion:
		m.t.Fatalf("schema moved %d -> %d without an upgrade (migratedTo %d)", before.SchemaVersion, out.SchemaVersion, migratedTo)
	case migratedTo == 0:
		return
	case migratedTo != TargetSchema(m.cfg):
		m.t.Fatalf("upgraded to %d, config asks for %d", migratedTo, TargetSchema(m.cfg))
	}
	for _, h := range before.Holders {
		if HolderIndex(out, h.HolderID) >= 0 {
			m.t.Fatalf("upgrade %d -> %d carried holder %s admitted under the old rules", before.SchemaVersion, migratedTo, h.HolderID)
		}
	}
	if before.SchemaVersion >= 4 {
		pruned, _ := PruneExpiredCooldowns(before, m.now)
		for _, r := range pruned.Reservations {
			if reservationIndex(out, r.ReservationID) >= 0 {
				m.t.Fatalf("upgrade %d -> %d kept live reservation %s", before.SchemaVersion, migratedTo, r.ReservationID)
			}
		}
	}
	last := -1
	for _, e := range out.Queue {
		at, ok := queueIDs(before)[e.HolderID]
		if !ok {
			continue
		}
		if at < last {
			m.t.Fatalf("upgrade %d -> %d reordered the queue at %s", before.SchemaVersion, migratedTo, e.HolderID)
		}
		last = at
	}
	m.stats.upgrades.Add(1)
}

func reservationIndex(s *State, id string) int {
	for i, r := range s.Reservations {
		if r.ReservationID == id {
			return i
		}
	}
	return -1
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
	if _, ok := m.arrivals[id.HolderID]; !ok && m.arrivals != nil {
		m.arrivals[id.HolderID] = NewArrival(m.s)
	}
	out, d, err := Acquire(m.s, m.cfg, AcquireRequest{Identity: id, Lease: time.Hour, Arrival: m.arrivals[id.HolderID]}, m.now)
	require.Equal(m.t, before, m.s, "Acquire mutated its input")
	if !m.check(err) {
		return
	}
	if !d.Changed {
		require.Equal(m.t, m.s, out)
	}
	m.invariants(out)
	m.lostOnly(before, out, id.HolderID)
	m.upgraded(before, out, d.MigratedTo)
	if d.Upgrade != nil && d.Outcome == OutcomeAdmitted && !d.QuarantineRecovered {
		m.t.Fatalf("%s admitted while an upgrade to schema %d drains (%s)", id.HolderID, d.Upgrade.To, d.Upgrade.Summary())
	}
	if d.Upgrade != nil {
		m.stats.paused.Add(1)
	}
	if d.Upgrade != nil && (out.SchemaVersion != before.SchemaVersion || !d.Upgrade.Paused()) {
		m.t.Fatalf("a paused acquire reported upgrade %+v and moved schema %d -> %d", *d.Upgrade, before.SchemaVersion, out.SchemaVersion)
	}
	switch d.Outcome {
	case OutcomeAdmitted:
		m.admitted(before, out, id, d)
	case OutcomeAlreadyHolder:
		if d.FencingToken != FencingToken(before, id.HolderID) {
			m.t.Fatalf("already-holder %s got token %d, holds %d", id.HolderID, d.FencingToken, FencingToken(before, id.HolderID))
		}
	case OutcomeQueued:
		m.queued(out, id, d)
	}
	m.fencing(before, out)
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

// admitted checks the token and counts the overtakes of one admission.
func (m *sim) admitted(before, out *State, id Identity, d AcquireDecision) {
	if out.SchemaVersion < FencedSchemaVersion {
		if d.FencingToken != 0 {
			m.t.Fatalf("schema %d admission issued token %d", out.SchemaVersion, d.FencingToken)
		}
		return
	}
	if d.FencingToken <= m.lastToken || m.issued[d.FencingToken] {
		m.t.Fatalf("token %d reused or not increasing (last %d)", d.FencingToken, m.lastToken)
	}
	if d.FencingToken != before.FencingToken+1 || out.FencingToken != d.FencingToken || FencingToken(out, id.HolderID) != d.FencingToken {
		m.t.Fatalf("token %d: counter %d -> %d, holder %d", d.FencingToken, before.FencingToken, out.FencingToken, FencingToken(out, id.HolderID))
	}
	m.issued[d.FencingToken], m.lastToken = true, d.FencingToken
	m.stats.admissions.Add(1)
	if d.MigratedTo == FencedSchemaVersion {
		m.stats.migrations.Add(1)
	}
	if d.QuarantineRecovered {
		return // a reclaim takes no seat a waiter could use: it passes nobody
	}
	if d.MigratedTo != 0 {
		// The write upgraded the lock before it admitted: a waiter could
		// have been admitted instead on the upgraded lock (its own poll
		// before the upgrade was paused, and no waiter is carried across
		// with an overtake).
		b := before.Clone()
		pruneExpired(b, m.now)
		applyUpgrade(b, planUpgrade(b, m.cfg, id.HolderID), id.HolderID, jsTrim(id.RunnerID))
		before = b
	}
	for _, w := range before.Queue {
		if w.HolderID == id.HolderID {
			break
		}
		if m.wouldAdmit(before, w) {
			continue
		}
		m.overtaken[w.HolderID]++
		m.stats.overtakes.Add(1)
		if m.overtaken[w.HolderID] == m.cfg.MaxOvertakes {
			m.stats.exhausted.Add(1)
		}
		if m.overtaken[w.HolderID] > m.cfg.MaxOvertakes {
			m.t.Fatalf("%s admitted past %s, overtaken %d times with maxOvertakes %d", id.HolderID, w.HolderID, m.overtaken[w.HolderID], m.cfg.MaxOvertakes)
		}
	}
}

// queued checks the rank contract and that the next identical poll writes
// nothing.
func (m *sim) queued(out *State, id Identity, d AcquireDecision) {
	if d.Inserted {
		return // joined by arrival in this write; its next poll decides
	}
	pruned, _ := PruneExpiredCooldowns(out, m.now)
	if rank := AdmissibleRank(pruned, m.cfg, id.HolderID); rank != d.Rank {
		m.t.Fatalf("decision rank %d, AdmissibleRank %d", d.Rank, rank)
	}
	if d.Upgrade == nil && d.Rank >= 0 && d.Rank < FreeSlots(pruned, m.cfg) {
		m.t.Fatalf("queued with rank %d and %d free slots", d.Rank, FreeSlots(pruned, m.cfg))
	}
	again, d2, err := Acquire(out, m.cfg, AcquireRequest{Identity: id, Lease: time.Hour, Arrival: m.arrivals[id.HolderID]}, m.now)
	if err != nil || d2.Changed || d2.Outcome != OutcomeQueued || d2.Rank != d.Rank {
		m.t.Fatalf("repeated waiting poll: err %v changed %v outcome %s rank %d/%d", err, d2.Changed, d2.Outcome, d2.Rank, d.Rank)
	}
	require.Equal(m.t, out, again)
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
	m.upgraded(before, out, d.MigratedTo)
	for _, h := range before.Holders {
		if h.HolderID != id.HolderID && HolderIndex(out, h.HolderID) < 0 {
			m.t.Fatalf("cleanup for %s removed holder %s", id.HolderID, h.HolderID)
		}
	}
	if out.FencingToken != before.FencingToken {
		m.t.Fatalf("cleanup changed the fencing counter %d -> %d", before.FencingToken, out.FencingToken)
	}
	m.fencing(before, out)
	delete(m.consumed, id.HolderID)
	m.s = out
}

// handoff runs direct handoff (what the release action does after its
// cleanup) and proves it equal to the waiters' own admissions in the same
// order: each admitted entry's own poll on the intermediate state would have
// been admitted, with the same token and the same overtakes, and afterwards
// no waiter's poll would be admitted except a quarantine reclaim.
func (m *sim) handoff() {
	before := m.s.Clone()
	out, d, err := Handoff(m.s, m.cfg, m.now)
	require.Equal(m.t, before, m.s, "Handoff mutated its input")
	if !m.check(err) {
		return
	}
	if !d.Changed {
		require.Equal(m.t, m.s, out)
		require.Empty(m.t, d.Admitted)
	}
	m.invariants(out)
	admitted := map[string]bool{}
	for _, id := range d.Admitted {
		admitted[id] = true
	}
	afterIDs := queueIDs(out)
	for id := range queueIDs(before) {
		if _, ok := afterIDs[id]; !ok && !admitted[id] {
			m.t.Fatalf("handoff lost queue entry %s", id)
		}
	}
	if got := len(out.Holders) + len(out.Reservations); len(d.Admitted) > 0 && got > m.cfg.MaxHolders {
		m.t.Fatalf("handoff exceeded capacity: %d > %d", got, m.cfg.MaxHolders)
	}
	// Replay the admissions as the waiters' own polls.
	st, _ := PruneExpiredCooldowns(before, m.now)
	st.Queue = dedupeQueue(st.Queue)
	for k, hid := range d.Admitted {
		e := st.Queue[queueIDs(st)[hid]]
		id := entryIdentity(e)
		next, ad, err := Acquire(st, m.cfg, AcquireRequest{Identity: id, Lease: time.Hour}, m.now)
		if err != nil && (tolerated[CodeOf(err)] || CodeOf(err) == CodeRunnerIDRequired) {
			// The config asks for a migration the busy lock cannot take
			// yet: a poll refuses where the release hands off by the
			// state's own schema. The invariants above still hold.
			m.fencing(before, out)
			m.s = out
			return
		}
		if err != nil || ad.Outcome != OutcomeAdmitted || ad.QuarantineRecovered {
			m.t.Fatalf("handoff admitted %s, whose own poll would not be admitted (%v, %s)", hid, err, ad.Outcome)
		}
		if ad.MigratedTo != 0 {
			// A migration makes the replay differ in more than admissions.
			m.fencing(before, out)
			m.s = out
			return
		}
		for _, w := range st.Queue {
			if w.HolderID == hid {
				break
			}
			if _, wd, err := Acquire(st, m.cfg, AcquireRequest{Identity: entryIdentity(w), Lease: time.Hour}, m.now); err == nil &&
				wd.Outcome == OutcomeAdmitted && !wd.QuarantineRecovered {
				m.t.Fatalf("handoff admitted %s past %s, who could have been admitted", hid, w.HolderID)
			}
		}
		m.admitted(st, next, id, ad)
		if ad.FencingToken != d.FencingTokens[k] {
			m.t.Fatalf("handoff token %d for %s, its own admission would get %d", d.FencingTokens[k], hid, ad.FencingToken)
		}
		st = next
	}
	for _, e := range out.Queue {
		if _, ad, err := Acquire(out, m.cfg, AcquireRequest{Identity: entryIdentity(e), Lease: time.Hour}, m.now); err == nil &&
			ad.Outcome == OutcomeAdmitted && !ad.QuarantineRecovered && ad.MigratedTo == 0 {
			m.t.Fatalf("after the handoff %s's own poll would still be admitted", e.HolderID)
		}
	}
	m.fencing(before, out)
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
	if out.FencingToken != before.FencingToken {
		m.t.Fatalf("recovery changed the fencing counter %d -> %d", before.FencingToken, out.FencingToken)
	}
	m.fencing(before, out)
	m.s = out
}

// schedule describes the random schedules one property test draws.
type schedule struct {
	schemas     []int
	configs     []Config
	reports     []Report
	identities  int
	maxSteps    int
	acquireBias int         // extra weight of acquire among the actions
	start       map[int]int // first config (index into propConfigs) per schema
	stats       *simStats
}

// simulate runs one random schedule of acquires, cleanups, config changes,
// clock advances, reruns and recoveries, checking every transition.
func simulate(rt *rapid.T, sc schedule) {
	runners := rapid.IntRange(1, 6).Draw(rt, "runners")
	n := rapid.IntRange(1, sc.identities).Draw(rt, "identities")
	start := rapid.SampledFrom(sc.schemas).Draw(rt, "schema")
	cfg := propConfigs[sc.start[start]]
	m := &sim{
		t: rt, s: stateAt(start), cfg: cfg, now: t0, consumed: map[string]*Reservation{},
		issued: map[int64]bool{}, overtaken: map[string]int{}, stats: sc.stats,
	}
	if rapid.Bool().Draw(rt, "arrivalInsertion") {
		m.arrivals = map[string]*Arrival{}
	}
	for i := range n {
		id := ident(i+1, fmt.Sprintf("runner-%d", rapid.IntRange(1, runners).Draw(rt, "runner")))
		m.ids = append(m.ids, id)
	}
	steps := rapid.IntRange(1, sc.maxSteps).Draw(rt, "steps")
	for range steps {
		i := rapid.IntRange(0, n-1).Draw(rt, "who")
		action := rapid.IntRange(0, 9+sc.acquireBias).Draw(rt, "action")
		switch {
		case action <= 3 || action > 9:
			m.acquire(i)
		case action <= 5:
			m.cleanup(i, rapid.SampledFrom(sc.reports).Draw(rt, "report"), rapid.Bool().Draw(rt, "queueOnly"), rapid.IntRange(0, 4).Draw(rt, "pre") == 0)
			if rapid.Bool().Draw(rt, "handoff") {
				m.handoff()
			}
		case action == 6:
			m.cfg = rapid.SampledFrom(sc.configs).Draw(rt, "config")
		case action == 7:
			m.now = m.now.Add(time.Duration(rapid.IntRange(0, 400).Draw(rt, "advance")) * time.Second)
		case action == 8:
			id := m.ids[i]
			id.RunAttempt = fmt.Sprint(rapid.IntRange(1, 3).Draw(rt, "attempt"))
			if rapid.Bool().Draw(rt, "moveRunner") {
				id.RunnerID = fmt.Sprintf("runner-%d", rapid.IntRange(1, runners).Draw(rt, "newRunner"))
			}
			m.ids[i] = id
		default:
			m.recover(rapid.Bool().Draw(rt, "quarantine"))
		}
	}
}

func TestPropertyTransitions(t *testing.T) {
	t.Parallel()
	stats := &simStats{}
	rapid.Check(t, func(rt *rapid.T) {
		simulate(rt, schedule{
			schemas: []int{2, 3, 4, 5, 6}, configs: propConfigs, identities: 8, maxSteps: 80, start: startConfig, stats: stats,
			reports: []Report{{}, confirmed, unproven, blocked, DegradedReport()},
		})
	})
	t.Logf("upgrades written %d, acquires paused by a draining upgrade %d", stats.upgrades.Load(), stats.paused.Load())
	if !t.Failed() && (stats.upgrades.Load() == 0 || stats.paused.Load() == 0) {
		t.Errorf("no schedule wrote an upgrade or paused for one: the upgrade properties are vacuous")
	}
}

// TestPropertyFencedSchedules concentrates on schema 6: busy locks, few
// incidents, configs that move maxOvertakes between 0 and 3 and back off
// the fencedAdmission flag, starting drained on schema 5 (so the 5 -> 6 step
// runs inside the schedule) or on schema 6.
func TestPropertyFencedSchedules(t *testing.T) {
	t.Parallel()
	var configs []Config
	for _, c := range propConfigs {
		if c.AccountHealth {
			configs = append(configs, c)
		}
	}
	stats := &simStats{}
	rapid.Check(t, func(rt *rapid.T) {
		simulate(rt, schedule{
			schemas: []int{5, 6}, configs: configs, identities: 10, maxSteps: 150, acquireBias: 4, start: map[int]int{5: 7, 6: 8},
			reports: []Report{{}, confirmed, confirmed, unproven, DegradedReport()}, stats: stats,
		})
	})
	t.Logf("schema-6 admissions %d, 5->6 migrations %d, overtakes %d, budgets exhausted %d",
		stats.admissions.Load(), stats.migrations.Load(), stats.overtakes.Load(), stats.exhausted.Load())
	if !t.Failed() {
		for name, n := range map[string]int64{"admissions": stats.admissions.Load(), "migrations": stats.migrations.Load(), "overtakes": stats.overtakes.Load(), "exhausted budgets": stats.exhausted.Load()} {
			if n == 0 {
				t.Errorf("no schedule reached any schema-6 %s: the property is vacuous", name)
			}
		}
	}
}
