package store

import (
	"context"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Reads that go back in time. GitHub serves Contents API reads from
// replicas that can lag a write by seconds (docs/emulator.md "Replica
// lag"), so a read after this Store's own write may return the version the
// write replaced, or an even older one. Every version this Store observed
// before one of its own writes landed is older than that write (the file's
// history is linear and the write's base was the head), so the Store keeps
// those blob SHAs and never lets a read of one of them replace a newer
// version it knows: Load keeps the newer snapshot, or reads again (at most
// maxStaleRereads times) when it has none, instead of handing an Update a
// base that is certain to lose its compare-and-swap.

//
// The SHAs cannot order a version this Store never saw. After an own write
// whose answer was lost (it may or may not have landed), an ordinary read
// can return a version older than the write's base that this Store never
// read, and a mutation decided on it would act on a past the lock already
// left (a rerun refusing holder-earlier-attempt on the version before the
// reaper removed attempt 1, with its own admission in the state: soak seed
// 101248). So until a read at the branch head (LoadFresh: the refs API, then
// the file at that commit, which no replica serves older) has decided such a
// write, Load reads there. It costs one extra request, only after a lost
// answer.

//
// A read at the branch head is a floor in the same way. Every version this
// Store read before it existed before it, so is at or older than it; an
// Update based on it that loses its compare-and-swap proves it superseded
// as well. The next ordinary read could still come from a replica older
// than that head, one this Store never saw: a release whose holder that
// version does not show yet would end as a no-op with the holder left in
// the state (a seat held until the reaper; the intermittent failure of
// issue 26's acceptance test). So an Update whose base was read at the
// head reads the next round's base at the head too (UpdateRounds), and
// headFloor keeps the superseded versions out of later ordinary reads.

// maxKnownOlder bounds the remembered superseded SHAs.
const maxKnownOlder = 256

// maxStaleRereads bounds the extra reads of one Load that met a version
// known to be superseded.
const maxStaleRereads = 2

// noteRead records a SHA a read returned.
func (s *Store) noteRead(sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sha == "" || len(s.seen) >= maxKnownOlder {
		return
	}
	s.seen = append(s.seen, sha)
}

// noteWrite records an own write that replaced base: every SHA observed so
// far, and base, are older than it.
func (s *Store) noteWrite(base, written string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markOlderLocked(written, append([]string{base}, s.seen...))
	s.seen = s.seen[:0]
	delete(s.older, written)
	s.wrote = true
}

// markOlderLocked records shas (but never newest) as older than a version
// this Store knows, forgetting the oldest records beyond maxKnownOlder. The
// caller holds s.mu.
func (s *Store) markOlderLocked(newest string, shas []string) {
	if s.older == nil {
		s.older = map[string]struct{}{}
	}
	for _, sha := range shas {
		if sha == "" || sha == newest {
			continue
		}
		if _, ok := s.older[sha]; ok {
			continue
		}
		if len(s.olderOrder) >= maxKnownOlder {
			delete(s.older, s.olderOrder[0])
			s.olderOrder = s.olderOrder[1:]
		}
		s.older[sha] = struct{}{}
		s.olderOrder = append(s.olderOrder, sha)
	}
}

// headFloor records a lost compare-and-swap on base, a version read at the
// branch head: base, every version read before it and this Store's own
// newest write are older than the branch head now.
func (s *Store) headFloor(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shas := append([]string{base}, s.seen...)
	if s.own != nil {
		shas = append(shas, s.own.SHA)
	}
	s.markOlderLocked("", shas)
	s.seen = s.seen[:0]
}

// supersede records base, the version a compare-and-swap lost on because
// the file moved (ghclient.IsFileMoved), as older than the file's version now. The
// history is linear and a state file's content never repeats (every
// version stamps updatedAt), so a replica that serves base again is
// lagging: Load reads again instead of deciding on it, where a decision
// would be one more write certain to lose, and one more content-creating
// request that the writer App's secondary limit counts (in bench
// burst-20-quarter-limits a first-wave job wrote three admissions on the
// seed version, each after the previous one lost). Only base: a version
// read before it may be newer (base itself may have come from a lagging
// replica).
func (s *Store) supersede(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markOlderLocked("", []string{base})
}

// ownWrite returns the newest snapshot this Store wrote, nil before its
// first write.
func (s *Store) ownWrite() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == nil {
		return nil
	}
	c := *s.own
	return &c
}

// Inherit gives s what from knows about the state file's history: its own
// newest write and the versions known to be older than that write. A Store
// made for one phase of an action (a cleanup with its own budget) then never
// decides on a read older than what the action's main Store wrote. It makes
// no request, and it does not hand over from's cached snapshot: s's first
// round still reads, because from's last write may have landed without an
// answer (the crash tests' "write accepted" boundary).
func (s *Store) Inherit(from *Store) {
	if from == nil || from == s {
		return
	}
	from.mu.Lock()
	own, wrote, undecided := from.own, from.wrote, from.undecided
	order := append([]string(nil), from.olderOrder...)
	from.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if own != nil {
		c := *own
		s.own = &c
	}
	s.wrote = s.wrote || wrote
	s.undecided = s.undecided || undecided
	if s.older == nil {
		s.older = map[string]struct{}{}
	}
	for _, sha := range order {
		if _, ok := s.older[sha]; !ok && len(s.olderOrder) < maxKnownOlder {
			s.older[sha] = struct{}{}
			s.olderOrder = append(s.olderOrder, sha)
		}
	}
}

// SeenAt tells s that its caller saw a version of the state stamped at
// (its updatedAt), in an earlier step of the same job: a release knows the
// version in which its acquire saw the job admitted
// (lockaction.SeedAdmissionFloor), and this Store never saw that version's
// SHA. From then on Load takes an ordinary read stamped before at for a
// lagging replica and reads at the branch head instead (LoadFresh: two
// requests, where deciding on the old version would cost a write certain
// to lose its compare-and-swap, and a content-creating request that the
// writer App's secondary limit counts). updatedAt is the writer's clock: a
// later version written by a writer whose clock runs behind only costs
// that read at the head, whose answer is taken whatever its stamp, so a
// skewed clock can never hold a Load back. It makes no request.
func (s *Store) SeenAt(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.floor) {
		s.floor = at
	}
}

// hasFloor reports whether SeenAt set a floor.
func (s *Store) hasFloor() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.floor.IsZero()
}

// loadAtHead is Load's answer when its ordinary read is known to be older
// than a version known to exist: the state at the branch head.
func (s *Store) loadAtHead(ctx context.Context) (Snapshot, error) {
	fresh, _, err := s.LoadFresh(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	s.noteRead(fresh.SHA)
	return fresh, nil
}

// belowFloor reports a state stamped before the floor SeenAt set.
func (s *Store) belowFloor(st *lockstate.State) bool {
	s.mu.Lock()
	floor := s.floor
	s.mu.Unlock()
	if floor.IsZero() || st == nil {
		return false
	}
	at, ok := lockstate.ParseTime(st.UpdatedAt)
	return ok && at.Before(floor)
}

// setUndecided records that an own write's outcome is unknown (v true) or
// known (v false).
func (s *Store) setUndecided(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undecided = v
}

// isUndecided reports whether an own write's outcome is still unknown.
func (s *Store) isUndecided() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.undecided
}

// decideAtHead is Load while an own write is undecided: the state at the
// branch head, whose answer decides the write (it shows the write's effect
// or it never will), after which reads go back to the ordinary path.
func (s *Store) decideAtHead(ctx context.Context) (Snapshot, error) {
	snap, err := s.loadAtHead(ctx)
	if err == nil {
		s.setUndecided(false)
	}
	return snap, err
}

// hasWritten reports whether this Store's own write ever landed.
func (s *Store) hasWritten() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote
}

// superseded reports whether sha is known to be older than a version this
// Store wrote.
func (s *Store) superseded(sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.older[sha]
	return ok
}

// StaleReadsIgnored is how many reads returned a version this Store knew to
// be superseded (kept out of its view of the state).
func (s *Store) StaleReadsIgnored() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.staleIgnored
}

func (s *Store) countStale() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staleIgnored++
}

// readState reads the state file, reading again (bounded) while the answer
// is a version known to be superseded and no newer snapshot is cached. It
// returns the newer cached snapshot instead when there is one (keep).
func (s *Store) readState(ctx context.Context) (data []byte, sha string, keep *Snapshot, err error) {
	for i := 0; ; i++ {
		data, sha, err = s.readFile(ctx, s.StatePath(), s.opts.Branch)
		// A missing file after an own write is a replica from before the
		// file existed (state files are never deleted).
		absent := err != nil && ghclient.IsNotFound(err) && s.hasWritten()
		if !absent && (err != nil || sha == "" || !s.superseded(sha)) {
			return data, sha, nil, err
		}
		s.countStale()
		if prev := s.cached(); prev != nil && prev.SHA != "" && !s.superseded(prev.SHA) {
			return nil, "", prev, nil
		}
		if own := s.ownWrite(); own != nil && !s.superseded(own.SHA) {
			// The own write is newer than what the replica returned: an
			// Update based on it either lands or loses its compare-and-swap
			// and reads again, but never decides on the older version.
			return nil, "", own, nil
		}
		if i >= maxStaleRereads {
			return data, sha, nil, err
		}
	}
}
