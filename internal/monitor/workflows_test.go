package monitor_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/deliveryaudit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/incidentaudit"
)

type workflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]any    `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func load(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	return w
}

var pinned = regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9-]+@[0-9a-f]{40}$`)

// TestMonitorWorkflows pins the spec §4.6 rows of the two monitors and the
// security rules (reliability anchors §4): SHA-pinned actions, no
// persisted checkout credentials, empty top-level permissions with the
// least job permissions, a stable uncancelled concurrency group, one command
// per step, and no ${{ }} expansion inside run:.
func TestMonitorWorkflows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, name, cron, group string
		perms                   map[string]string
		run                     string
		main                    func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr *bytes.Buffer) error
		workflowRun             string
		env                     map[string]string
	}{
		{
			file: "lock-recovery-audit.yml", name: "Build lock incident recovery audit", cron: "2,12,22,32,42,52 * * * *",
			group: "build-lock-incident-recovery-audit", perms: map[string]string{"contents": "read", "issues": "write"},
			run: "go run ./cmd/lock-recovery-audit --state-ref=lock-state",
			env: map[string]string{"GITHUB_TOKEN": "${{ github.token }}", "BUILD_LOCK_NAME": "${{ vars.BUILD_LOCK_NAME }}"},
			main: func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr *bytes.Buffer) error {
				return incidentaudit.Main(ctx, args, getenv, stdout, stderr, monitor.Deps{})
			},
		},
		{
			file: "reaper-delivery-audit.yml", name: "Reaper delivery audit", cron: "7,17,27,37,47,57 * * * *",
			group: "reaper-delivery-audit", perms: map[string]string{"actions": "read", "contents": "read", "issues": "write"},
			run: "go run ./cmd/reaper-delivery-audit --workflow=reap-stale-locks.yml --max-delivery-delay=30m --max-run-duration=15m",
			main: func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr *bytes.Buffer) error {
				return deliveryaudit.Main(ctx, args, getenv, stdout, stderr, monitor.Deps{})
			},
			workflowRun: "Reap stale build locks",
		},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			w := load(t, tc.file)
			assert.Equal(t, tc.name, w.Name)
			assert.Empty(t, w.Permissions, "top-level permissions must be {}")
			assert.Equal(t, tc.group, w.Concurrency.Group)
			assert.False(t, w.Concurrency.CancelInProgress)
			sched, _ := w.On["schedule"].([]any)
			require.Len(t, sched, 1)
			assert.Equal(t, tc.cron, sched[0].(map[string]any)["cron"])
			assert.Contains(t, w.On, "workflow_dispatch")
			if tc.workflowRun != "" {
				wr := w.On["workflow_run"].(map[string]any)
				assert.Equal(t, []any{tc.workflowRun}, wr["workflows"])
				assert.Equal(t, []any{"completed"}, wr["types"])
			}
			require.Len(t, w.Jobs, 1)
			for _, job := range w.Jobs {
				assert.Equal(t, tc.perms, job.Permissions)
				var runs []string
				for _, s := range job.Steps {
					if s.Uses != "" {
						assert.Regexp(t, pinned, s.Uses)
					}
					if strings.HasPrefix(s.Uses, "actions/checkout@") {
						assert.Equal(t, false, s.With["persist-credentials"])
					}
					if s.Run != "" {
						assert.NotContains(t, s.Run, "${{")
						assert.NotContains(t, strings.TrimSpace(s.Run), "\n", "one command per step")
						runs = append(runs, s.Run)
						wantEnv := tc.env
						if wantEnv == nil {
							wantEnv = map[string]string{"GITHUB_TOKEN": "${{ github.token }}"}
						}
						assert.Equal(t, wantEnv, s.Env)
					}
				}
				require.Equal(t, []string{tc.run}, runs)
				// The workflow's flags are the flags the command accepts: with
				// them, the first failure is the missing token, not usage.
				args := strings.Fields(tc.run)[3:]
				var out, errOut bytes.Buffer
				err := tc.main(context.Background(), args, func(string) string { return "" }, &out, &errOut)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "GITHUB_TOKEN is required")
			}
		})
	}
}

func TestCIWorkflow(t *testing.T) {
	t.Parallel()
	w := load(t, "ci.yml")
	assert.Equal(t, "Build lock CI", w.Name)
	assert.Contains(t, w.On, "pull_request")
	assert.Contains(t, w.On, "push")
	assert.Empty(t, w.Permissions)
	assert.False(t, w.Concurrency.CancelInProgress, "its self-test job reaches acquire: never cancel a run in progress")
	runs := map[string]bool{}
	for _, job := range w.Jobs {
		assert.Equal(t, map[string]string{"contents": "read"}, job.Permissions)
		for _, s := range job.Steps {
			if s.Uses != "" && !strings.HasPrefix(s.Uses, "./.github/actions/") {
				assert.Regexp(t, pinned, s.Uses, "a third-party action is pinned; the self-test runs this repository's own")
			}
			if s.Run != "" {
				runs[s.Run] = true
			}
		}
	}
	// The job layout is internal/actioncontract's business (workflows_test.go
	// there); the README's two gates must run somewhere.
	for _, want := range []string{"make lint", "make test"} {
		assert.True(t, runs[want], "ci.yml runs %s", want)
	}
}
