// Package plant holds the switches of the planted bugs (reliability goal
// R-T1: the checker must be able to fail). Each switch guards a one-line
// hook in production code that, when on, reintroduces a known class of bug.
//
// Production binaries cannot turn a bug on: without the plantedbugs build
// tag Enabled is a constant false (plant_off.go) that the compiler folds
// away, and there is no setter at all. Only `go test -tags plantedbugs`
// compiles plant_on.go, whose Set flips an atomic flag.
package plant

// Bug names one planted bug.
type Bug int

// The planted bugs.
const (
	// FreeSlotOffByOne makes lockstate.FreeSlots count one seat too many.
	FreeSlotOffByOne Bug = iota
	// SkipAmbiguousReconcile makes store.Update treat a write whose outcome
	// is ambiguous as written instead of re-reading to reconcile it.
	SkipAmbiguousReconcile
	// QuarantineOnTimeAlone makes the reaper (and lockstate.Reap) auto-recover
	// an aged quarantine without proof that its owning run finished.
	QuarantineOnTimeAlone
	// DropAttemptFence makes lockstate cleanup ownership ignore the run
	// attempt, so a stale attempt removes a newer attempt's entry.
	DropAttemptFence
	// TrustStaleRead makes acquire report acquired from a read that would
	// admit it, without a committed compare-and-swap.
	TrustStaleRead
	// SeatGivenTwice makes the seat scan (lockstate planSeats) ignore the
	// seats holders record, so a free seat may be one a holder has.
	SeatGivenTwice
	// PriorityStarves makes a higher priority class pass an earlier waiter
	// regardless of maxOvertakes (the barrier holds only within a class).
	PriorityStarves
	// MachineSerializationIgnored makes lockstate key runner serialization
	// on the runner id alone under serializeBy "machine", so two runner
	// agents on one machine may hold two seats.
	MachineSerializationIgnored
	// CleanupBehindHead makes a store Update whose base was read at the
	// branch head read the next round's base by branch name after a lost
	// race, and acquire's own cleanup start from an ordinary read, so a
	// cleanup may decide "nothing to remove" on a replica older than a
	// version it already knew.
	CleanupBehindHead
	numBugs
)

// All lists every planted bug.
func All() []Bug {
	out := make([]Bug, 0, numBugs)
	for b := range numBugs {
		out = append(out, b)
	}
	return out
}

// String names the bug.
func (b Bug) String() string {
	switch b {
	case FreeSlotOffByOne:
		return "free-slot-off-by-one"
	case SkipAmbiguousReconcile:
		return "skip-ambiguous-reconcile"
	case QuarantineOnTimeAlone:
		return "quarantine-freed-on-time-alone"
	case DropAttemptFence:
		return "drop-run-attempt-fence"
	case TrustStaleRead:
		return "trust-stale-read"
	case SeatGivenTwice:
		return "seat-given-twice"
	case PriorityStarves:
		return "priority-starves"
	case MachineSerializationIgnored:
		return "machine-serialization-ignored"
	case CleanupBehindHead:
		return "cleanup-behind-head"
	}
	return "unknown"
}
