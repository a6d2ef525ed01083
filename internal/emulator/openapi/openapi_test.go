package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator/openapi"
)

func load(t *testing.T) *openapi.Description {
	t.Helper()
	d, err := openapi.Load()
	require.NoError(t, err)
	return d
}

// world is an emulator with one repository, a file and a plain token.
func world(t *testing.T) *emulator.Emulator {
	t.Helper()
	em := emulator.New(emulator.Options{Clock: clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)), Seed: 1})
	em.AddOwner("acme", 1001, true)
	em.AddRepo("acme", "build-lock", 2001, "main")
	em.AddToken("openapi-test-secret", emulator.TokenScope{Label: "t", Repos: []string{"acme/build-lock"},
		Permissions: map[string]string{"contents": "write", "metadata": "read", "pull_requests": "write", "issues": "write", "actions": "read"}})
	_, err := em.PutFile("acme", "build-lock", "main", "locks/x.json", []byte(`{"a":1}`))
	require.NoError(t, err)
	return em
}

func send(t *testing.T, tr http.RoundTripper, method, path string, body any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, "http://emulator.test"+path, rd)
	req.Header.Set("Authorization", "Bearer openapi-test-secret")
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "openapi-test")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp
}

// TestEmulatorAnswersMatchTheDescription drives the operations the state
// path uses and expects no violation at all.
func TestEmulatorAnswersMatchTheDescription(t *testing.T) {
	d := load(t)
	em := world(t)
	rec := openapi.NewRecorder(d, em.Transport())
	send(t, rec, "GET", "/repos/acme/build-lock", nil)
	get := send(t, rec, "GET", "/repos/acme/build-lock/contents/locks/x.json?ref=main", nil)
	require.Equal(t, 200, get.StatusCode)
	send(t, rec, "PUT", "/repos/acme/build-lock/contents/locks/y.json", map[string]any{"message": "m", "content": "e30=", "branch": "main"})
	send(t, rec, "PUT", "/repos/acme/build-lock/contents/locks/x.json", map[string]any{"message": "m", "content": "e30=", "sha": "0000000000000000000000000000000000000000"})
	send(t, rec, "GET", "/repos/acme/build-lock/git/ref/heads/main", nil)
	send(t, rec, "GET", "/repos/acme/build-lock/commits?per_page=1", nil)
	send(t, rec, "GET", "/repos/acme/build-lock/branches/main", nil)
	assert.Empty(t, openapi.Summary(rec.Violations()))
	assert.Equal(t, 7, rec.Exchanges())
}

// plant rewrites one field of every JSON response body.
type plant struct {
	next  http.RoundTripper
	field string
	value any
}

func (p plant) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		if p.value == nil {
			delete(m, p.field)
		} else {
			m[p.field] = p.value
		}
		b, _ = json.Marshal(m)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// TestPlantedWrongFieldFails proves the check catches a wrong answer: a
// contents read whose sha is a number, and one without its sha.
func TestPlantedWrongFieldFails(t *testing.T) {
	d := load(t)
	for _, tc := range []struct {
		name  string
		value any
		kind  string
	}{
		{"wrong type", 42, openapi.KindBody},
		{"missing", nil, openapi.KindRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := openapi.NewRecorder(d, plant{next: world(t).Transport(), field: "sha", value: tc.value})
			send(t, rec, "GET", "/repos/acme/build-lock/contents/locks/x.json", nil)
			vs := rec.Violations()
			require.NotEmpty(t, vs, "the planted field passed the check")
			assert.Equal(t, tc.kind, vs[0].Kind)
			assert.Equal(t, "GET /repos/{owner}/{repo}/contents/{path}", vs[0].Operation)
			assert.Contains(t, vs[0].Detail, "sha")
		})
	}
	// And Attach turns a violation into a test failure.
	ft := &fakeT{}
	rec := openapi.Attach(ft, plant{next: world(t).Transport(), field: "sha", value: 42})
	send(t, rec, "GET", "/repos/acme/build-lock/contents/locks/x.json", nil)
	ft.cleanup()
	assert.True(t, ft.failed, "Attach did not fail the test")
}

type fakeT struct {
	failed   bool
	cleanups []func()
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) cleanup() {
	for _, fn := range f.cleanups {
		fn()
	}
}

// TestUndocumentedStatusFails: a status neither documented nor allowlisted
// is a violation; an allowlisted one is not.
func TestUndocumentedStatusFails(t *testing.T) {
	d := load(t)
	em := world(t)
	em.AddFault(emulator.Fault{Method: "GET", Kind: emulator.ServerError, Status: 418 + 82, Count: 1}) // 500: allowlisted
	rec := openapi.NewRecorder(d, em.Transport())
	send(t, rec, "GET", "/repos/acme/build-lock", nil)
	assert.Empty(t, rec.Violations())
	teapot := openapi.NewRecorder(d, roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 418, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	}))
	send(t, teapot, "GET", "/repos/acme/build-lock", nil)
	vs := teapot.Violations()
	require.Len(t, vs, 1)
	assert.Equal(t, openapi.KindStatus, vs[0].Kind)
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAllowlistIsReviewed: every entry names its source, once.
func TestAllowlistIsReviewed(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range openapi.Allowlist {
		key := a.Operation + " " + http.StatusText(a.Status)
		assert.False(t, seen[key], "duplicate %s", key)
		seen[key] = true
		assert.True(t, strings.Contains(a.Source, "https://") || strings.Contains(a.Source, "@octokit/fixtures"), "entry %s %d has no source", a.Operation, a.Status)
	}
}

// TestEveryRouteIsDescribed: each operation the emulator serves is in
// GitHub's description (the exceptions are listed, with the reason).
func TestEveryRouteIsDescribed(t *testing.T) {
	d := load(t)
	described := map[string]bool{}
	for _, op := range d.Operations {
		described[shape(op)] = true
	}
	notInDescription := map[string]string{
		"GET /repos/{owner}/{repo}/contents": "the repository root listing; GitHub serves it (path is empty) but describes only .../contents/{path}",
	}
	for _, rt := range emulator.RouteTemplates() {
		if _, ok := notInDescription[rt]; ok {
			continue
		}
		assert.True(t, described[shape(rt)], "%s is not in GitHub's description", rt)
	}
}

func shape(op string) string {
	var b strings.Builder
	depth := 0
	for _, r := range op {
		switch {
		case r == '{':
			depth++
			if depth == 1 {
				b.WriteString("{}")
			}
		case r == '}':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
