package actionio

import (
	"bytes"
	"strings"
	"sync"
)

// SyncBuffer collects one in-process step's stdout (its workflow commands)
// when the step runs in a goroutine: a bytes.Buffer safe for concurrent
// writers and readers. The demo, the simulation and the test harnesses use
// it where a runner would capture the process's stdout.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail returns the last n lines written.
func (s *SyncBuffer) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(s.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
