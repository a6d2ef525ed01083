package actionkit

import (
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// Deps are the edges of one in-process action run. main wires the real ones
// (os.Getenv, os.Stdout, the wall clock, net/http, the process signals);
// tests and the demo inject an environment map, a buffer, the emulator's
// in-memory transport and a synctest bubble's clock.
type Deps struct {
	// Getenv reads the environment (inputs arrive as INPUT_<NAME>). Required.
	Getenv func(string) string
	// Stdout receives workflow commands (::warning:: and friends). Required.
	Stdout io.Writer
	// Clock tells time and sleeps; default clock.Real{}. The bounded
	// cleanup windows use the time package, so a non-real clock must agree
	// with it (clock.Real inside a synctest bubble does).
	Clock clock.Clock
	// Jitter returns a value in [0,1); default math/rand/v2.Float64.
	Jitter func() float64
	// Transport is the base HTTP transport of every GitHub request; default
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Signals tells which runner signal cancelled the context (nil: none).
	Signals *lockaction.Signals
	// PollUnit is the length of one poll-seconds unit for acquire; default
	// one second. The demo compresses time with a smaller unit.
	PollUnit time.Duration
	// Machine are the OS edges of the machine-local build queue (acquire's
	// machine-slots, release and the post step); the zero value is the
	// real process table and liveness.
	Machine machineslot.Edges
}

// WithDefaults returns d with every optional field filled.
func (d Deps) WithDefaults() Deps {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Jitter == nil {
		d.Jitter = rand.Float64
	}
	if d.Transport == nil {
		d.Transport = http.DefaultTransport
	}
	if d.PollUnit <= 0 {
		d.PollUnit = time.Second
	}
	return d
}

// ClientOptions returns the lockaction client options of d.
func (d Deps) ClientOptions() lockaction.ClientOptions {
	return lockaction.ClientOptions{Clock: d.Clock, Jitter: d.Jitter, Transport: d.Transport}
}

// Jittered returns base plus a uniform draw from [0, spread).
func (d Deps) Jittered(base, spread time.Duration) time.Duration {
	r := d.Jitter()
	if r < 0 || r >= 1 {
		r = 0
	}
	return base + time.Duration(r*float64(spread))
}
