// Package machinequeue is the pure core of the machine-local build queue: a
// FIFO queue in front of K slots (1 to 64) shared by every runner agent on
// one physical machine (issue 26, docs/machine-queue.md). It holds the state
// schema of the queue file, its strict codec and the three transitions
// (Take, Release, Reclaim). It does no I/O, reads no clock (now is a
// parameter) and judges no process: whether a recorded process is alive
// arrives as Evidence, gathered by the OS layer (package liveness) and
// passed in by the store (package filestore).
//
// Why not internal/lockstate over a second store: the organization lock's
// rules are keyed on a GitHub run (holder ids with run attempts, runner
// serialization, leases that expire, schema-4 quarantines of every seat
// released without proof of license cleanup, fencing tokens), and its
// holders carry no slot number. A machine slot has none of those: its
// holder is a process tree, alive or proven dead, it never expires by age,
// releasing it needs no cleanup proof, and the job needs a stable slot
// number (for example to choose a per-slot workspace). Mapping it onto
// lockstate would mean inventing run identities and an infinite lease and
// turning off four of its five safety families. So this package is a small
// core of the same shape instead: func(s *State, req, ev Evidence, now)
// (*State, Decision, error), never modifying its input, with the same
// testing (tables, rapid properties, a fuzzed strict decoder that reuses
// lockstate.CheckStrictJSON).
//
// Safety rules enforced here:
//
//   - Capacity. Every queue entry and holder records the K it asked for
//     (Slots). A waiter is admitted only while holders+1 <= min(its K, the K
//     of every holder), so for every holder h, len(Holders) <= h.Slots:
//     jobs that disagree about K (a workflow change rolling out) can never
//     overfill the smaller promise. Decode refuses a state that breaks it.
//   - Strict FIFO. Only the queue head is admitted, and it is admitted by
//     whichever write sees a free slot first (every transition settles the
//     queue), so after every write the head is not admissible: no slot
//     idles while a live job waits.
//   - Stable slots. A holder keeps its slot number (1..K, unique among
//     holders, the lowest free one at admission) until it leaves.
//   - Ownership. Release removes only an entry whose recorded owner process
//     is the caller's (same pid and start time); another owner's entry of
//     the same holder id is refused (CodeHolderConflict), never removed.
//   - Liveness, fail closed. An entry is reclaimed only when Evidence proves
//     a recorded process dead (VerdictDead: gone, or its pid now belongs to
//     a process started at another time). Unknown keeps the entry. A holder
//     is bound to its owner; a waiter to its owner and to the process that
//     waits for it (the Take caller).
//   - Bad input changes nothing: every refusal is an *Error with a stable
//     Code and no state is returned.
package machinequeue
