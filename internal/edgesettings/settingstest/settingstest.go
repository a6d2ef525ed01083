// Package settingstest holds the helpers of the bad-input tests every
// binary has (issue 24): a transport that fails the test on any request,
// a step's file-command files, and the problem list of a refusal.
package settingstest

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
)

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// NoRequests returns a transport that fails t on any request (and refuses
// it).
func NoRequests(t testing.TB) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("a request was sent before the settings were valid: %s %s", r.Method, r.URL)
		return nil, errors.New("settingstest: no request may be sent")
	})
}

// Files creates an empty GITHUB_OUTPUT and GITHUB_STEP_SUMMARY (and
// GITHUB_STATE) under t.TempDir, sets them in env, and returns their paths.
func Files(t testing.TB, env map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{edgesettings.EnvOutput, edgesettings.EnvSummary, edgesettings.EnvState} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		env[name] = p
		paths = append(paths, p)
	}
	return paths
}

// Written returns the content of the files at paths that are not empty
// (path → content); a missing file counts as empty.
func Written(t testing.TB, paths ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if len(b) > 0 {
			out[p] = string(b)
		}
	}
	return out
}

// Problems returns the problems of err, which must be an
// *edgesettings.Error, with their codes.
func Problems(t testing.TB, err error) (*edgesettings.Error, []string) {
	t.Helper()
	var e *edgesettings.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *edgesettings.Error listing every problem, got %T: %v", err, err)
	}
	return e, e.Codes()
}
