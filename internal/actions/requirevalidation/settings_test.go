package requirevalidation_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/requirevalidation"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
)

// TestAMissingOutputFileIsRefusedBeforeAnything: the gate's one settings
// problem (GITHUB_OUTPUT unset; odd job results are an unsafe verdict, not
// a settings problem) is reported before anything is written; no request
// is ever sent.
func TestAMissingOutputFileIsRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	env := map[string]string{"INPUT_UNITY": "exploded", "INPUT_CLASSIFIER": "?"}
	files := settingstest.Files(t, env)
	delete(env, "GITHUB_OUTPUT")
	var out bytes.Buffer
	err := requirevalidation.Run(context.Background(), requirevalidation.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, _ := settingstest.Problems(t, err)
	require.Len(t, e.Problems, 1)
	assert.True(t, errors.Is(err, actionio.ErrFileCommandUnavailable))
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())
}
