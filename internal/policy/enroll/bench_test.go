package enroll_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
)

// BenchmarkAuditRequests measures what one audit of enrolled repositories
// holding the complete consumer pattern costs in API requests (JWT calls
// and installation-token requests included) and reports it per repository:
// the reader App's hourly budget bounds how often an organization can
// audit.
func BenchmarkAuditRequests(b *testing.B) {
	repos := []string{"game-a", "game-b", "game-c", "game-d"}
	w := newWorld(b, repos, repos...)
	wf, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "consumer-workflow.yml"))
	require.NoError(b, err)
	good := strings.ReplaceAll(string(wf), "Ambiguous-Interactive/ambiguous-organization-build-lock", lockRepo)
	for _, r := range repos {
		w.put(r, unityPath, good)
		w.put(r, ".github/actions/setup/action.yml", "name: s\ndescription: s\nruns:\n  using: composite\n  steps:\n    - run: echo\n      shell: bash\n")
	}
	out := filepath.Join(b.TempDir(), "audit.json")
	var requests int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.em.ResetMetrics()
		err := enroll.Main(context.Background(), []string{"audit", "--out", out}, func(k string) string { return w.env[k] }, io.Discard, io.Discard,
			monitor.Deps{Transport: w.em.Transport(), Clock: w.clk})
		require.NoError(b, err)
		requests += w.em.Metrics().Requests
	}
	b.ReportMetric(float64(requests)/float64(b.N)/float64(len(repos)), "requests/repository")
}
