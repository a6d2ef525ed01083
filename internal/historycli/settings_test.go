package historycli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/historycli"
)

// TestEveryBadSettingIsReportedInOneRun: for each command, a malformed
// repository, no writer, a bad branch, no credentials, a bad server URL
// and command-specific mistakes are all reported by one run, a usage
// error; nothing is sent and no summary is written.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		args []string
		want int
	}{
		"verify": {[]string{"verify", "--repo", "nope", "--branch", "a..b", "--format", "xml", "--acknowledge", "123"}, 7},
		"report": {[]string{"report", "--repo", "nope", "--branch", "a..b", "--format", "pdf", "--since", "soon"}, 7},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"GITHUB_SERVER_URL": "ftp://example", "BUILD_LOCK_NAME": "unity-seats"}
			summary := filepath.Join(t.TempDir(), "summary.md")
			var out, errOut bytes.Buffer
			err := historycli.Main(context.Background(), append(tc.args, "--summary", summary), func(k string) string { return env[k] }, &out, &errOut,
				historycli.Deps{Transport: settingstest.NoRequests(t)})
			assert.ErrorIs(t, err, historycli.ErrUsage)
			e, _ := settingstest.Problems(t, err)
			assert.Len(t, e.Problems, tc.want, "%v", err)
			for _, want := range []string{"--repo", "--writer", "--branch", "--format", "GITHUB_SERVER_URL", "no credentials"} {
				assert.Contains(t, err.Error(), want)
			}
			assert.Empty(t, settingstest.Written(t, summary))
			assert.Empty(t, out.String())
		})
	}
}
