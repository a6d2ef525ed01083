package lockaction_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestReasonCode(t *testing.T) {
	t.Parallel()
	_, stateErr := lockstate.Decode([]byte(`{`), lockstate.DecodeOptions{Lock: "x"})
	cases := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), ""},
		{fmt.Errorf("decode: %w", stateErr), "invalid-json"},
		{lockaction.Refuse("state-branch-is-default", "no"), "state-branch-is-default"},
		{&actionio.InputError{Input: "runner-id", Code: actionio.CodeControlCharacter}, "input-control-character"},
		{&ghclient.Error{Code: ghclient.CodeRetryExhausted}, ghclient.CodeRetryExhausted},
		{&ghclient.Error{Status: 403}, "github-api-403"},
		{&ghclient.Error{}, "github-api-unavailable"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, lockaction.ReasonCode(tc.err), "%v", tc.err)
	}
}

func TestFinishPutsTheReasonCodeInTheTitleAndTheSummary(t *testing.T) {
	t.Parallel()
	summary := filepath.Join(t.TempDir(), "summary")
	env := baseEnv()
	env["GITHUB_STEP_SUMMARY"] = summary
	a, out := io(env)
	_, stateErr := lockstate.Decode([]byte(`{"lock":"x","lock":"x"}`), lockstate.DecodeOptions{Lock: "x"})
	require.Equal(t, lockaction.ExitFailure, lockaction.Finish(a, nil, fmt.Errorf("read state: %w", stateErr)))
	assert.Contains(t, out.String(), "::error title=duplicate-key::read state: decode lock state")
	data, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(data), "### Refused: `duplicate-key`")
}
