package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// TestDoctorReportsEachCheckWithItsFix: without credentials every App check
// fails with its fix, the repository checks are skipped, and the command
// exits 1; bad flags are usage errors (exit 2).
func TestDoctorReportsEachCheckWithItsFix(t *testing.T) {
	t.Parallel()
	em := emulator.New(emulator.Options{Seed: 1})
	em.AddOwner("example-org", 1001, true)
	em.AddRepo("example-org", "build-lock", 2001, "main")
	env := map[string]string{"GITHUB_API_URL": "https://api.emulator.test"}
	var out, errOut strings.Builder
	err := doctorCommand(context.Background(), []string{"--lock-repository", "example-org/build-lock"}, &out, &errOut,
		doctorDeps{getenv: func(k string) string { return env[k] }, transport: em.Transport()})
	require.ErrorIs(t, err, errChecksFailed)
	text := out.String()
	assert.Contains(t, text, "FAIL  writer-app-installed")
	assert.Contains(t, text, "FAIL  reader-app-installed")
	assert.Contains(t, text, "SKIP  state-branch")
	assert.Contains(t, text, "      fix: Set BUILD_LOCK_APP_ID and BUILD_LOCK_APP_PRIVATE_KEY")

	out.Reset()
	err = doctorCommand(context.Background(), []string{"--lock-repository", "example-org/build-lock", "--json"}, &out, &errOut,
		doctorDeps{getenv: func(k string) string { return env[k] }, transport: em.Transport()})
	require.ErrorIs(t, err, errChecksFailed)
	assert.Contains(t, out.String(), `"id": "writer-app-installed"`)

	for _, args := range [][]string{nil, {"--lock-repository", "nope"}, {"--lock-repository", "a/b", "extra"}} {
		err := doctorCommand(context.Background(), args, &out, &errOut, doctorDeps{getenv: func(string) string { return "" }})
		assert.ErrorIs(t, err, errUsage, "%v", args)
	}
	assert.Equal(t, 2, run(context.Background(), []string{"doctor"}, &out, &errOut))
}
