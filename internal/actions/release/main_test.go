package release_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/release"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestMain generates the App key once for the whole binary.
func TestMain(m *testing.M) {
	actiontest.Setup()
	os.Exit(m.Run())
}

// hold admits j through the acquire action and resets its files.
func hold(t *testing.T, j *actiontest.Job) {
	t.Helper()
	require.NoError(t, acquire.Run(context.Background(), j.Deps()))
	j.ResetFiles()
}

// rel runs the release step of j.
func rel(j *actiontest.Job) error { return release.Run(context.Background(), j.Deps()) }

// seedSchema seeds an empty state at schema.
func seedSchema(w *actiontest.World, schema int) {
	s := lockstate.Empty(actiontest.Lock)
	s.SchemaVersion = schema
	w.SeedState(s)
}

const (
	lifecycle60 = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":60}`
	lifecycle0  = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":0}`
	health      = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":60}`
)
