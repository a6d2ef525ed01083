// Package clock abstracts time so that every layer above the pure lock-state
// core can be driven by a fake clock in tests and simulations.
//
// The pure core (internal/lockstate) never reads a clock: callers pass `now`.
// Edges (the GitHub client, the store, the emulator, the demo) take a Clock.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and sleeps. Sleep returns ctx.Err() when the context
// ends first, so a cancelled caller never waits out a full backoff.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock. Inside a testing/synctest bubble it is the bubble's
// fake clock, which is how concurrent tests run without real sleeps.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done, whichever comes first.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Fake is a manually driven clock for single-goroutine tests: Sleep advances
// the clock by d immediately (unless ctx is already done) and records the
// requested duration, so a test can assert the exact waits a retry loop chose
// without any real sleeping.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFake returns a Fake clock starting at start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Sleep records d and advances the clock by it. It returns ctx.Err() without
// advancing when ctx is already done.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.now = f.now.Add(d)
	}
	f.sleeps = append(f.sleeps, d)
	return nil
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
}

// Sleeps returns a copy of every duration passed to Sleep, in order.
func (f *Fake) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// Later is the later of a and b (a when they are equal).
func Later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Earlier is the earlier of a and b (a when they are equal).
func Earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
