package githubissue_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
)

const (
	owner  = "acme"
	repo   = "build-lock"
	marker = "<!-- test-monitor -->"
	bot    = "github-actions[bot]"
)

type fixture struct {
	em  *emulator.Emulator
	clk *clock.Fake
	ic  *githubissue.Client
}

func newFixture(t *testing.T, mutate func(*githubissue.Options), wrap func(http.RoundTripper) http.RoundTripper) *fixture {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	em := emulator.New(emulator.Options{Clock: clk, Seed: 3})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	em.AddToken("workflow-token-secret", emulator.TokenScope{Label: "workflow", Repos: []string{owner + "/" + repo},
		Permissions: map[string]string{"issues": "write", "contents": "read"}})
	var tr http.RoundTripper = em.Transport()
	if wrap != nil {
		tr = wrap(tr)
	}
	gh, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.emulator.test/", Token: "workflow-token-secret",
		Transport: tr, Clock: clk, Jitter: func() float64 { return 0 }})
	require.NoError(t, err)
	opts := githubissue.Options{Client: gh, Owner: owner, Repo: repo, Clock: clk}
	if mutate != nil {
		mutate(&opts)
	}
	ic, err := githubissue.New(opts)
	require.NoError(t, err)
	return &fixture{em: em, clk: clk, ic: ic}
}

func (f *fixture) writes() int64 { return f.em.Metrics().Writes }

func spec(body string, state githubissue.State) githubissue.Spec {
	return githubissue.Spec{Marker: marker, Title: "ops: test alert", Body: marker + "\n" + body, State: state}
}

func TestLifecycleCreateUpdateCloseWithoutChurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	ctx := context.Background()

	// Closed wanted and nothing exists: nothing is created.
	res, err := f.ic.Sync(ctx, spec("healthy", githubissue.Closed))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionNone, res.Action)
	assert.Nil(t, res.Issue)
	assert.Zero(t, f.writes())

	res, err = f.ic.Sync(ctx, spec("incident A", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionCreated, res.Action)
	require.NotNil(t, res.Issue)
	num := res.Issue.Number
	assert.Equal(t, bot, res.Issue.Author)
	assert.EqualValues(t, 1, f.writes())

	// Same wanted shape: zero writes.
	f.em.ResetMetrics()
	res, err = f.ic.Sync(ctx, spec("incident A", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionNone, res.Action)
	assert.Zero(t, f.writes())

	res, err = f.ic.Sync(ctx, spec("incident B", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionUpdated, res.Action)
	assert.Equal(t, num, res.Issue.Number)

	// Close without rewriting the body.
	closing := spec("recovered", githubissue.Closed)
	closing.PreserveBodyOnClose = true
	res, err = f.ic.Sync(ctx, closing)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionClosed, res.Action)
	assert.Equal(t, githubissue.Closed, res.Issue.State)
	assert.Equal(t, marker+"\nincident B", res.Issue.Body)

	f.em.ResetMetrics()
	res, err = f.ic.Sync(ctx, closing)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionNone, res.Action)
	assert.Zero(t, f.writes())

	// A new problem re-opens the same issue rather than opening a second one.
	res, err = f.ic.Sync(ctx, spec("incident C", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionReopened, res.Action)
	assert.Equal(t, num, res.Issue.Number)
	assert.Equal(t, marker+"\nincident C", res.Issue.Body)
}

func TestForeignLookalikeIsIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	foreign, err := f.em.CreateIssue(owner, repo, "mallory", "ops: test alert", marker+"\nclick here", "open")
	require.NoError(t, err)
	got, err := f.ic.Find(context.Background(), spec("x", githubissue.Open))
	require.NoError(t, err)
	assert.Nil(t, got)

	res, err := f.ic.Sync(context.Background(), spec("real", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionCreated, res.Action)
	assert.NotEqual(t, foreign, res.Issue.Number)
}

func TestDuplicatesAreAnErrorAndNothingIsWritten(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\none", "open")
	require.NoError(t, err)
	b, err := f.em.CreateIssue(owner, repo, bot, "renamed", marker+"\ntwo", "closed")
	require.NoError(t, err)
	_, err = f.ic.Sync(context.Background(), spec("three", githubissue.Open))
	require.ErrorIs(t, err, githubissue.ErrDuplicate)
	assert.Contains(t, err.Error(), "#"+strconv.Itoa(a))
	assert.Contains(t, err.Error(), "#"+strconv.Itoa(b))
	assert.Zero(t, f.writes())
}

func TestRenamedTitleIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	n, err := f.em.CreateIssue(owner, repo, bot, "Operator renamed this", marker+"\nold", "open")
	require.NoError(t, err)
	res, err := f.ic.Sync(context.Background(), spec("new", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionUpdated, res.Action)
	assert.Equal(t, n, res.Issue.Number)
	assert.Equal(t, "Operator renamed this", res.Issue.Title)
}

func TestMatchTitleRequiresTheExactTitle(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	_, err := f.em.CreateIssue(owner, repo, bot, "something else", marker+"\nold", "open")
	require.NoError(t, err)
	s := spec("new", githubissue.Open)
	s.MatchTitle = true
	res, err := f.ic.Sync(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionCreated, res.Action)
	assert.Equal(t, "ops: test alert", res.Issue.Title)
}

func TestClosedIsTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	n, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\nlast unhealthy", "closed")
	require.NoError(t, err)

	healthy := spec("healthy at run 9", githubissue.Closed)
	healthy.ClosedIsTerminal = true
	res, err := f.ic.Sync(context.Background(), healthy)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionNone, res.Action)
	assert.Zero(t, f.writes())

	// Without ClosedIsTerminal a closed issue's body is refreshed (no reopen).
	healthy.ClosedIsTerminal = false
	res, err = f.ic.Sync(context.Background(), healthy)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionUpdated, res.Action)
	assert.Equal(t, githubissue.Closed, res.Issue.State)

	unhealthy := spec("overdue", githubissue.Open)
	unhealthy.ClosedIsTerminal = true
	res, err = f.ic.Sync(context.Background(), unhealthy)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionReopened, res.Action)
	assert.Equal(t, n, res.Issue.Number)
}

func TestClosingRewritesBodyUnlessPreserved(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	_, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\nunhealthy", "open")
	require.NoError(t, err)
	res, err := f.ic.Sync(context.Background(), spec("healthy again", githubissue.Closed))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionClosed, res.Action)
	assert.Equal(t, marker+"\nhealthy again", res.Issue.Body)
}

func TestDiscoveryPaginatesAndIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *githubissue.Options) { o.PerPage = 2 }, nil)
	for i := 0; i < 7; i++ {
		_, err := f.em.CreateIssue(owner, repo, bot, "other automation", "<!-- other -->", "open")
		require.NoError(t, err)
	}
	n, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\nlast page", "open")
	require.NoError(t, err)
	got, err := f.ic.Find(context.Background(), spec("x", githubissue.Open))
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, n, got.Number)
	assert.EqualValues(t, 4, f.em.Metrics().Requests)

	bounded := newFixture(t, func(o *githubissue.Options) { o.PerPage = 2; o.MaxPages = 2 }, nil)
	for i := 0; i < 5; i++ {
		_, err := bounded.em.CreateIssue(owner, repo, bot, "other automation", "<!-- other -->", "open")
		require.NoError(t, err)
	}
	_, err = bounded.ic.Find(context.Background(), spec("x", githubissue.Open))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 2 pages")
}

// redirected pretends every issue listing was served from another
// repository's path, as a followed redirect would be.
type redirected struct{ next http.RoundTripper }

func (r redirected) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/issues") {
		moved := req.Clone(req.Context())
		moved.URL.Path = "/repos/elsewhere/other/issues"
		resp.Request = moved
	}
	return resp, err
}

func TestResponsesOutsideTheRepositoryAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, func(next http.RoundTripper) http.RoundTripper { return redirected{next} })
	_, err := f.ic.Sync(context.Background(), spec("x", githubissue.Open))
	require.ErrorIs(t, err, githubissue.ErrFence)
	assert.Zero(t, f.writes())
}

func TestInvalidSpecs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	tests := []struct {
		name string
		spec githubissue.Spec
	}{
		{"no marker", githubissue.Spec{Title: "t", Body: "b", State: githubissue.Open}},
		{"marker not a comment", githubissue.Spec{Marker: "marker", Title: "t", Body: "marker", State: githubissue.Open}},
		{"body without marker", githubissue.Spec{Marker: marker, Title: "t", Body: "b", State: githubissue.Open}},
		{"no title", githubissue.Spec{Marker: marker, Body: marker, State: githubissue.Open}},
		{"bad state", githubissue.Spec{Marker: marker, Title: "t", Body: marker, State: "locked"}},
		{"oversized body", githubissue.Spec{Marker: marker, Title: "t", Body: marker + strings.Repeat("x", githubissue.MaxBodyChars), State: githubissue.Open}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.ic.Sync(context.Background(), tt.spec)
			assert.ErrorIs(t, err, githubissue.ErrInvalidSpec)
		})
	}
	assert.Zero(t, f.em.Metrics().Requests)

	_, err := githubissue.New(githubissue.Options{Owner: owner, Repo: repo})
	assert.ErrorIs(t, err, githubissue.ErrInvalidSpec)
}
