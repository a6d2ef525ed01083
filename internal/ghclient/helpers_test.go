package ghclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
)

// basePath mounts the scripted API under a GHES-style prefix so every test
// also proves that APIURL prefixes survive.
const basePath = "/api/v3"

// reply is one scripted response.
type reply struct {
	status int
	header map[string]string
	body   string
	// check inspects the request (runs on the server goroutine).
	check func(t *testing.T, r *http.Request, body []byte)
	// hang blocks until the request's context ends (a stalled connection).
	hang bool
	// hangup closes the connection without answering (a transport error
	// after the request was sent).
	hangup bool
}

// recorded is what the server saw.
type recorded struct {
	method, path string
	header       http.Header
	body         string
}

// scripted is an httptest GitHub: a queue of replies per "METHOD /path".
// Unexpected requests fail the test; unconsumed replies fail it at cleanup.
type scripted struct {
	t      *testing.T
	mu     sync.Mutex
	routes map[string][]reply
	seen   []recorded
	srv    *httptest.Server
	now    func() time.Time // the server's clock for Date; nil: net/http's
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	s := &scripted{t: t, routes: map[string][]reply{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for k, q := range s.routes {
			assert.Empty(t, q, "%d scripted replies for %s were never requested", len(q), k)
		}
	})
	return s
}

// on queues replies for method and path (path is relative to basePath).
func (s *scripted) on(method, path string, replies ...reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := method + " " + basePath + path
	s.routes[key] = append(s.routes[key], replies...)
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Method + " " + r.URL.Path
	s.mu.Lock()
	s.seen = append(s.seen, recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: string(body)})
	q := s.routes[key]
	if len(q) == 0 {
		s.mu.Unlock()
		assert.Fail(s.t, "unexpected request "+key)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, `{"message":"unexpected request"}`)
		return
	}
	rep := q[0]
	s.routes[key] = q[1:]
	s.mu.Unlock()
	if rep.check != nil {
		rep.check(s.t, r, body)
	}
	if rep.hang {
		<-r.Context().Done()
		return
	}
	if rep.hangup {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	if _, ok := rep.header["Content-Type"]; !ok {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	if s.now != nil {
		// GitHub stamps Date on its own clock: the harness's fake clock
		// stands for it (a reply may override it to model skew).
		w.Header().Set("Date", s.now().UTC().Format(http.TimeFormat))
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

// requests returns a copy of every request seen.
func (s *scripted) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.seen...)
}

// harness bundles a client with its fake clock and captured warnings.
type harness struct {
	c     *Client
	clock *clock.Fake
	srv   *scripted
	mu    sync.Mutex
	warns []string
	masks []string
}

func (h *harness) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.warns...)
}

func (h *harness) masked() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.masks...)
}

// testStart is near the wall clock so ghinstallation's own time.Now expiry
// check agrees with the fake clock.
func testStart() time.Time { return time.Now().UTC().Truncate(time.Second) }

// newHarness builds a client against a scripted server. mutate may adjust
// the config (App auth, knobs, jitter...).
func newHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	s := newScripted(t)
	h := &harness{clock: clock.NewFake(testStart()), srv: s}
	s.now = h.clock.Now
	cfg := Config{
		APIURL:    s.srv.URL + basePath,
		Token:     "test-plain-token-value",
		Transport: &http.Transport{DisableKeepAlives: true},
		Clock:     h.clock,
		Jitter:    func() float64 { return 0.5 },
		Warn: func(m string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.warns = append(h.warns, m)
		},
		Mask: func(sec string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.masks = append(h.masks, sec)
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(context.Background(), cfg)
	require.NoError(t, err)
	h.c = c
	return h
}

// getRepo is a read: GET /repos/o/r.
func (h *harness) getRepo(ctx context.Context, b Budget) error {
	return h.c.Do(ctx, Op{Name: "GET repos o/r", Budget: b}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := h.c.GitHub().Repositories.Get(ctx, "o", "r")
		return resp, err
	})
}

// putFile is a mutation: PUT /repos/o/r/contents/locks/x.json.
func (h *harness) putFile(ctx context.Context, b Budget) error {
	return h.c.Do(ctx, Op{Name: "PUT contents locks/x.json", Mutation: true, Budget: b}, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := h.c.GitHub().Repositories.UpdateFile(ctx, "o", "r", "locks/x.json", &github.RepositoryContentFileOptions{
			Message: github.String("Release lock"),
			Content: []byte("{}\n"),
			SHA:     github.String("abc"),
			Branch:  github.String("lock-state"),
		})
		return resp, err
	})
}

const (
	repoPath = "/repos/o/r"
	filePath = "/repos/o/r/contents/locks/x.json"
	okRepo   = `{"id":1,"name":"r"}`
	okPut    = `{"content":{"sha":"def"}}`
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func msg(m string) string { return `{"message":"` + m + `"}` }

func hdr(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// mustErr requires err to be a *Error and returns it.
func mustErr(t *testing.T, err error) *Error {
	t.Helper()
	require.Error(t, err)
	e, ok := asError(err)
	require.True(t, ok, "expected *Error, got %T: %v", err, err)
	return e
}

// eqSleeps checks the fake clock's sleeps (no sleep at all equals none
// wanted, whether the slice is nil or empty).
func eqSleeps(t *testing.T, got []time.Duration, want ...time.Duration) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	assert.Equal(t, want, got, "sleeps")
}
