package actionkit

import (
	"context"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// Cancellation cleanup windows (spec §3.9; notes B.12). The runner sends
// SIGINT, then SIGTERM 7.5 s later, then kills the process tree 2.5 s after
// that: cleanup after SIGINT must end before SIGTERM arrives, cleanup after
// SIGTERM before the kill.
const (
	// SIGINTCleanupBudget bounds cleanup that starts after SIGINT.
	SIGINTCleanupBudget = 5 * time.Second
	// SIGTERMCleanupBudget bounds cleanup that starts after SIGTERM.
	SIGTERMCleanupBudget = 1500 * time.Millisecond
)

// SignalBudget returns the cleanup window left by the signal recorded in s:
// SIGTERMCleanupBudget after SIGTERM, else SIGINTCleanupBudget (also for a
// cancellation without a recorded signal).
func SignalBudget(s *lockaction.Signals) time.Duration {
	if s.Code() == lockaction.ExitSIGTERM {
		return SIGTERMCleanupBudget
	}
	return SIGINTCleanupBudget
}

// CleanupContext returns a context for cleanup that survives the
// cancellation of ctx (context.WithoutCancel) but is bounded: it ends after
// normal, and — once ctx is cancelled, whether before or during the
// cleanup — no later than the signal window (SignalBudget) measured from
// that moment. Cleanup therefore always finishes inside the runner's
// SIGINT→SIGTERM→kill sequence.
func CleanupContext(ctx context.Context, s *lockaction.Signals, normal time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), normal)
	var (
		mu      sync.Mutex
		timer   *time.Timer
		stopped bool
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			timer = time.AfterFunc(SignalBudget(s), cancel)
		}
	})
	return cctx, func() {
		stop()
		mu.Lock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}
