package crashtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// phase is where, around request k of the victim, a cut falls.
type phase int

const (
	// before: request k is about to be sent; nothing of it reached GitHub.
	phaseBefore phase = iota
	// accepted: GitHub applied request k (a mutation) but its response
	// has not reached the client.
	phaseAccepted
	// after: response k was received and its body closed by the client;
	// the client has not taken its next step.
	phaseAfter
)

func (p phase) String() string {
	switch p {
	case phaseBefore:
		return "before-send"
	case phaseAccepted:
		return "write-accepted"
	}
	return "after-response"
}

// fault is what happens at the boundary.
type fault int

const (
	faultSIGKILL fault = iota
	faultSIGINT
	faultStall
)

var faults = []fault{faultSIGKILL, faultSIGINT, faultStall}

func (f fault) String() string {
	switch f {
	case faultSIGKILL:
		return "sigkill"
	case faultSIGINT:
		return "sigint"
	}
	return "stall"
}

// errKilled is what a killed process's transport returns: nothing leaves.
var errKilled = errors.New("crashtest: the process was killed (SIGKILL); nothing is sent")

// request is one request of the victim as the transport saw it.
type request struct {
	Label    string // "METHOD /path" (no query)
	Mutation bool   // anything but GET/HEAD
	Status   int    // status delivered to the client (0: none)
	At       time.Time
}

// label names a request by method and API path.
func label(r *http.Request) string { return r.Method + " " + r.URL.Path }

func isMutation(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// cutPlan is the boundary a case cuts at.
type cutPlan struct {
	Req   int
	Phase phase
	Label string // the reference label of request Req
	Fault fault
}

// cutTransport wraps the victim's transport. Without a plan it only
// records (the reference run). With a plan it fires the fault exactly once
// at the planned boundary by calling fire (synchronously, on the victim's
// goroutine, before the victim can take another step), and:
//   - SIGKILL: the request at the boundary (before/accepted) gets no
//     response and every later request is refused and counted;
//   - SIGINT: the request continues on its own context (a cancelled
//     context fails it, a cleanup context that survives cancellation
//     delivers the response);
//   - stall: before/accepted — the request at the boundary hangs until its
//     context ends; after — the network goes silent: every later request
//     hangs until its context ends.
type cutTransport struct {
	base http.RoundTripper
	plan *cutPlan
	fire func(fault)

	mu        sync.Mutex
	reqs      []request
	fired     bool
	killed    bool
	partition bool
	afterKill []string
	mismatch  string
	released  chan struct{} // closed to end every stall (watchdog)
	relOnce   sync.Once
}

func newCut(base http.RoundTripper, plan *cutPlan, fire func(fault)) *cutTransport {
	return &cutTransport{base: base, plan: plan, fire: fire, released: make(chan struct{})}
}

// kill refuses every later request and ends every stall (also used by the
// watchdog to unwind a victim that overran its budget).
func (c *cutTransport) kill() {
	c.mu.Lock()
	c.killed = true
	c.mu.Unlock()
	c.relOnce.Do(func() { close(c.released) })
}

// Requests returns what the victim sent (or tried to send before a kill).
func (c *cutTransport) Requests() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.reqs...)
}

// AfterKill lists the requests refused after the kill.
func (c *cutTransport) AfterKill() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.afterKill...)
}

// Fired reports whether the planned boundary was reached.
func (c *cutTransport) Fired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// Mismatch is non-empty when request Req differed from the reference.
func (c *cutTransport) Mismatch() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mismatch
}

func (c *cutTransport) setStatus(k, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs[k].Status = status
}

func (c *cutTransport) doFire(f fault) {
	c.mu.Lock()
	if c.fired {
		c.mu.Unlock()
		return
	}
	c.fired = true
	if f == faultSIGKILL {
		c.killed = true
	}
	c.mu.Unlock()
	if c.fire != nil {
		c.fire(f)
	}
}

// stall hangs until the request's context ends (or the watchdog kills).
func (c *cutTransport) stall(r *http.Request) (*http.Response, error) {
	select {
	case <-r.Context().Done():
		return nil, r.Context().Err()
	case <-c.released:
		return nil, errKilled
	}
}

// RoundTrip implements http.RoundTripper.
func (c *cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	k := len(c.reqs)
	lbl := label(r)
	if c.killed {
		c.afterKill = append(c.afterKill, lbl)
		c.mu.Unlock()
		drain(r)
		return nil, errKilled
	}
	c.reqs = append(c.reqs, request{Label: lbl, Mutation: isMutation(r), At: time.Now()})
	partition := c.partition
	plan := c.plan
	c.mu.Unlock()
	if partition {
		drain(r)
		return c.stall(r)
	}
	if plan == nil || k != plan.Req {
		return c.forward(k, r)
	}
	if lbl != plan.Label {
		c.mu.Lock()
		c.mismatch = fmt.Sprintf("request %d is %q, the reference has %q", k, lbl, plan.Label)
		c.mu.Unlock()
	}
	switch plan.Phase {
	case phaseBefore:
		c.doFire(plan.Fault)
		switch plan.Fault {
		case faultSIGKILL:
			drain(r)
			return nil, errKilled
		case faultStall:
			drain(r)
			return c.stall(r)
		}
		return c.forward(k, r)
	case phaseAccepted:
		resp, err := c.base.RoundTrip(r)
		var body []byte
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
		c.doFire(plan.Fault)
		switch plan.Fault {
		case faultSIGKILL:
			return nil, errKilled
		case faultStall:
			return c.stall(r)
		}
		if cerr := r.Context().Err(); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		c.setStatus(k, resp.StatusCode)
		return resp, nil
	}
	// phaseAfter: the fault fires when the client closes the body, i.e.
	// once it has received the whole response.
	resp, err := c.forward(k, r)
	if err != nil {
		c.afterFire(plan.Fault)
		return nil, err
	}
	resp.Body = &closeHook{ReadCloser: resp.Body, fn: func() { c.afterFire(plan.Fault) }}
	return resp, nil
}

func (c *cutTransport) afterFire(f fault) {
	if f == faultStall {
		c.mu.Lock()
		c.partition = true
		c.mu.Unlock()
	}
	c.doFire(f)
}

func (c *cutTransport) forward(k int, r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		c.setStatus(k, resp.StatusCode)
	}
	return resp, err
}

func drain(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// closeHook runs fn once when the body is closed or read to its end,
// whichever comes first: go-github reads an error response to EOF and
// replaces the body without closing the original (CheckResponse), so for a
// 409 the end of the body is the client having received the response.
type closeHook struct {
	io.ReadCloser
	once sync.Once
	fn   func()
}

func (h *closeHook) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		h.once.Do(h.fn)
	}
	return n, err
}

func (h *closeHook) Close() error {
	err := h.ReadCloser.Close()
	h.once.Do(h.fn)
	return err
}

// boundary is one enumerated cut point of an action.
type boundary struct {
	Index int
	Req   int
	Phase phase
	Label string
}

// Name is the subtest name, e.g. b07-r03-after-response.
func (b boundary) Name() string { return fmt.Sprintf("b%02d-r%02d-%s", b.Index, b.Req, b.Phase) }

// boundaries enumerates the cut points of a reference request sequence:
// before each request, after each mutation's write was accepted, and after
// each response.
func boundaries(ref []request) []boundary {
	var out []boundary
	add := func(k int, p phase) {
		out = append(out, boundary{Index: len(out), Req: k, Phase: p, Label: ref[k].Label})
	}
	for k, r := range ref {
		add(k, phaseBefore)
		if r.Mutation {
			add(k, phaseAccepted)
		}
		add(k, phaseAfter)
	}
	return out
}

func describe(reqs []request) string {
	var b strings.Builder
	for i, r := range reqs {
		fmt.Fprintf(&b, "  r%02d %s -> %d\n", i, r.Label, r.Status)
	}
	return b.String()
}
