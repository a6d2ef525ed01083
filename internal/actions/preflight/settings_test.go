package preflight_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/preflight"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestEveryBadSettingIsReportedInOneRun: a malformed calling repository, an
// owner that is not a login, no label sets, a bad App id and no key are
// reported together, the first one's code as the reason; nothing is sent
// and nothing written.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"GITHUB_REPOSITORY": "not-a-repository", "INPUT_OWNER": "-bad-", "INPUT_READER_APP_ID": "07",
	}
	files := settingstest.Files(t, env)
	var out bytes.Buffer
	err := preflight.Run(context.Background(), preflight.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &out,
		Transport: settingstest.NoRequests(t)})
	_, codes := settingstest.Problems(t, err)
	assert.Equal(t, []string{"input-" + preflight.CodeRepository, "input-pattern-mismatch", "input-required", "input-pattern-mismatch", "input-required"}, codes, "%v", err)
	assert.Equal(t, "input-"+preflight.CodeRepository, lockaction.ReasonCode(err))
	for _, name := range []string{"GITHUB_REPOSITORY", preflight.InputOwner, preflight.InputRequiredLabelSets, preflight.InputReaderAppID, preflight.InputReaderAppPrivateKey} {
		assert.Contains(t, err.Error(), name)
	}
	assert.Empty(t, settingstest.Written(t, files...))
	assert.Empty(t, out.String())
}
