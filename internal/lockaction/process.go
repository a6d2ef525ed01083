package lockaction

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// ghTransport is http.RoundTripper, named here so ClientOptions reads well.
type ghTransport = http.RoundTripper

// Exit codes of every lock action binary (spec §1.1, §3.9).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitSIGINT  = 130
	ExitSIGTERM = 143
)

// Signals turns the runner's cancellation signals into context cancellation.
// GitHub sends SIGINT, then SIGTERM 7.5 s later, then kills the process tree
// 2.5 s after that; the first signal cancels the returned context and fixes
// the exit code, a later one only updates it.
type Signals struct {
	mu   sync.Mutex
	code int
	stop func()
}

// NotifyContext returns a context cancelled by SIGINT or SIGTERM and the
// Signals that remembers which arrived.
func NotifyContext(parent context.Context) (context.Context, *Signals) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	s := &Signals{}
	done := make(chan struct{})
	s.stop = func() {
		signal.Stop(ch)
		close(done)
	}
	go func() {
		for {
			select {
			case sig := <-ch:
				s.record(sig)
				cancel(ErrCancelled)
			case <-done:
				cancel(nil)
				return
			}
		}
	}()
	return ctx, s
}

// ErrCancelled is the cancellation cause of a signal-cancelled context.
var ErrCancelled = errors.New("cancelled by the runner")

func (s *Signals) record(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig == syscall.SIGTERM {
		s.code = ExitSIGTERM
	} else {
		s.code = ExitSIGINT
	}
}

// Simulate records sig as if the runner had sent it (tests).
func (s *Signals) Simulate(sig os.Signal) { s.record(sig) }

// Code returns 130 or 143 once a signal arrived, else 0.
func (s *Signals) Code() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code
}

// Stop releases the signal handlers (call it in a defer).
func (s *Signals) Stop() {
	if s != nil && s.stop != nil {
		s.stop()
	}
}

// Finish maps the result of an action to its exit code: 0 on success, 130 or
// 143 after a runner signal, else 1 with the error reported as one
// ::error:: line.
//
// The ::error annotation's title is the error's stable reason code
// (ReasonCode), and the same code and message are appended to the job
// summary, so operators can search for a refusal by its code.
func Finish(a *actionio.IO, s *Signals, err error) int {
	if code := s.Code(); code != 0 {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrCancelled) {
			reportRefusal(a, err)
		}
		return code
	}
	if err == nil {
		return ExitOK
	}
	reportRefusal(a, err)
	return ExitFailure
}
