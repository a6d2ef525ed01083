package validatelicense_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/validatelicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
)

// TestAMissingOutputFileIsRefusedBeforeAnything: the action's one settings
// problem (GITHUB_OUTPUT unset; the license verdict itself is the action's
// decision, after its outputs) is reported before a secret is masked or
// anything is written, and no request is ever sent.
func TestAMissingOutputFileIsRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	env := map[string]string{"INPUT_ACTIVATION_MODE": "floating", "UNITY_SERIAL": "serial-secret", "UNITY_LICENSING_SERVER": "https://l"}
	files := settingstest.Files(t, env)
	delete(env, "GITHUB_OUTPUT")
	var out bytes.Buffer
	err := validatelicense.Run(context.Background(), validatelicense.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	e, _ := settingstest.Problems(t, err)
	require.Len(t, e.Problems, 1)
	assert.True(t, errors.Is(err, actionio.ErrFileCommandUnavailable))
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())
}
