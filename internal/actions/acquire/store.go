package acquire

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Compare-and-swap budgets per caller (spec §3.7 table).
const (
	// acquireCASRounds bounds the rounds of one queue/admission write; a
	// lost round re-reads and re-decides inside the same Update.
	acquireCASRounds = 3
	// acquireConflictDelay is jitter(1000) = 1000–1332 ms.
	acquireConflictDelay = time.Second
	// failureCleanupRounds and failureConflictDelay serve timeout,
	// pre-activation and incident cleanup.
	failureCleanupRounds = 3
	failureConflictDelay = 500 * time.Millisecond
	// cancelCleanupRounds and cancelConflictDelay serve cleanup after a
	// runner signal: passes 250 ms apart (jittered), one attempt per
	// request, as many as the signal window leaves time for (its context
	// deadline ends them: 5 s after SIGINT, 1.5 s after SIGTERM), at most
	// eight. The reference's two passes lose a waiter's cleanup to two
	// jobs joining in the same second, which leaves its entry to the
	// release step or the reaper.
	cancelCleanupRounds = 8
	cancelConflictDelay = 250 * time.Millisecond
	// failureCleanupWindow bounds cleanup that is not after a signal.
	failureCleanupWindow = 30 * time.Second
	// MaxConflictBackoff caps the window of the wait after consecutive
	// joins that lost their compare-and-swap round (burst.go): 64 jobs
	// joining at one instant need about two minutes of spread.
	MaxConflictBackoff = 3 * time.Minute
)

// newStore builds a store of the target lock sharing c (one token mint and
// one ETag cache per process) with its own budget and CAS round limits.
// beforeWrite (optional) is store.Options.BeforeWrite.
func newStore(c *ghclient.Client, t lockaction.Target, d Deps, budget ghclient.Budget, rounds int, delay time.Duration, beforeWrite func()) (*store.Store, error) {
	return store.New(store.Options{
		Client: c, Owner: t.Owner, Repo: t.Repo, Branch: t.Branch, Lock: t.Lock, ServerURL: t.ServerURL,
		Clock: d.Clock, Jitter: d.Jitter, Budget: budget, MaxRounds: rounds, ConflictDelay: delay,
		BeforeWrite: beforeWrite,
	})
}
