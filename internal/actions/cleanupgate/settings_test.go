package cleanupgate_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupgate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestAMissingOutputFileIsRefusedBeforeAnything: the gate's one settings
// problem (GITHUB_OUTPUT unset; bad evidence is an unsafe verdict, not a
// settings problem) is reported with its code before anything is written;
// no request is ever sent.
func TestAMissingOutputFileIsRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	env := map[string]string{"INPUT_ACQUIRED": "maybe", "INPUT_RELEASED": "?"}
	files := settingstest.Files(t, env)
	delete(env, "GITHUB_OUTPUT")
	var out bytes.Buffer
	err := cleanupgate.Run(context.Background(), cleanupgate.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, codes := settingstest.Problems(t, err)
	require.Len(t, e.Problems, 1)
	assert.Equal(t, []string{cleanupgate.CodeOutputFileMissing}, codes)
	assert.Equal(t, cleanupgate.CodeOutputFileMissing, lockaction.ReasonCode(err))
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())
}
