package acquire_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/stretchr/testify/assert"
)

// TestMain generates the App key once for the whole binary.
func TestMain(m *testing.M) {
	actiontest.Setup()
	os.Exit(m.Run())
}

// run is one acquire step of j.
func run(ctx context.Context, j *actiontest.Job) error { return acquire.Run(ctx, j.Deps()) }

// runDeps is one acquire step with explicit deps.
func runDeps(ctx context.Context, d acquire.Deps) error { return acquire.Run(ctx, d) }

// resourceRequests counts requests made with installation tokens.
func resourceRequests(m emulator.Metrics) int64 {
	var n int64
	for k, c := range m.ByCredential {
		if strings.HasPrefix(k, "installation:") {
			n += c.Requests
		}
	}
	return n
}

// chargedInstallation counts charged installation-token requests.
func chargedInstallation(m emulator.Metrics) int64 {
	var n int64
	for k, c := range m.ByCredential {
		if strings.HasPrefix(k, "installation:") {
			n += c.Charged
		}
	}
	return n
}

// emptyState is the empty schema-2 state of the test lock.
func emptyState() *lockstate.State { return lockstate.Empty(actiontest.Lock) }

// releaseRun is one release step of j.
func releaseRun(ctx context.Context, j *actiontest.Job) error { return release.Run(ctx, j.Deps()) }

// assertNotAcquired checks the output set of an acquire that failed before
// admission: acquired is exactly false (the cleanup gate's "no seat was
// taken"), and admission-result is code ("" accepts any non-empty code).
func assertNotAcquired(t *testing.T, j *actiontest.Job, code string) {
	t.Helper()
	out := j.Outputs()
	assert.Equal(t, "false", out["acquired"], "outputs %v", out)
	if code == "" {
		assert.NotEmpty(t, out["admission-result"])
	} else {
		assert.Equal(t, code, out["admission-result"])
	}
}
