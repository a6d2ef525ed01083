package fakeeditor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/testexec"
)

// Install copies the running test binary to path (creating its parent
// directories), so the code under test runs it as the editor.
func Install(t testing.TB, path string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := testexec.Copy(path, in, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Timers is a hand-fired proc.After: every timer the code under test arms is
// queued, and fires only when the test sends on its channel.
type Timers struct{ reqs chan Timer }

// Timer is one armed timer.
type Timer struct {
	D time.Duration
	C chan time.Time
}

// Fire fires the timer.
func (tm Timer) Fire() { tm.C <- time.Now() }

// NewTimers returns an empty Timers.
func NewTimers() *Timers { return &Timers{reqs: make(chan Timer, 64)} }

// After is the proc.After to inject.
func (f *Timers) After(d time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	f.reqs <- Timer{D: d, C: c}
	return c
}

// Next returns the next timer armed, failing the test when none is armed
// within a minute (a deadlock guard, never the expected path).
func (f *Timers) Next(t testing.TB) Timer {
	t.Helper()
	select {
	case tm := <-f.reqs:
		return tm
	case <-time.After(time.Minute):
		t.Fatal("no further timer was armed")
		return Timer{}
	}
}
