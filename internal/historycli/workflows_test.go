package historycli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
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
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
			With map[string]any    `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

var pinned = regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9-]+(/[a-z0-9-]+)?@[0-9a-f]{40}$`)

// TestHistoryWorkflows pins the daily verification and the weekly report:
// schedules, least-privilege permissions (contents: read, and issues: write
// only where the alert issue is written), SHA-pinned actions, no persisted
// checkout credentials, no ${{ }} inside run:, one command per step, the
// checkpoint restored and saved (even after a failure) under one key
// prefix, and, run against a generated history on the emulator, the exact
// command each workflow runs.
func TestHistoryWorkflows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, name, cron, group string
		perms                   map[string]string
		command                 string
	}{
		{"history-verify.yml", "Build lock history verification", "41 5 * * *", "build-lock-history-verify",
			map[string]string{"contents": "read", "issues": "write"}, "go run ./cmd/buildlock history verify "},
		{"history-report.yml", "Build lock seat-demand report", "23 6 * * 1", "build-lock-history-report",
			map[string]string{"contents": "read"}, "go run ./cmd/buildlock history report "},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", tc.file))
			require.NoError(t, err)
			var w workflow
			require.NoError(t, yaml.Unmarshal(data, &w))
			assert.Equal(t, tc.name, w.Name)
			assert.Empty(t, w.Permissions, "top-level permissions must be {}")
			assert.Equal(t, tc.group, w.Concurrency.Group)
			assert.False(t, w.Concurrency.CancelInProgress)
			sched, _ := w.On["schedule"].([]any)
			require.Len(t, sched, 1)
			assert.Equal(t, tc.cron, sched[0].(map[string]any)["cron"])
			assert.Contains(t, w.On, "workflow_dispatch")
			require.Len(t, w.Jobs, 1)
			for _, job := range w.Jobs {
				assert.Equal(t, tc.perms, job.Permissions)
				var runs []string
				var env map[string]string
				keys := map[string]bool{}
				for _, s := range job.Steps {
					if s.Uses != "" {
						assert.Regexp(t, pinned, strings.SplitN(s.Uses, " ", 2)[0])
					}
					if strings.HasPrefix(s.Uses, "actions/checkout@") {
						assert.Equal(t, false, s.With["persist-credentials"])
					}
					if strings.HasPrefix(s.Uses, "actions/cache/") {
						keys[s.Uses[:strings.Index(s.Uses, "@")]] = true
						assert.Equal(t, ".history-checkpoints", s.With["path"])
						assert.Equal(t, "build-lock-history-checkpoint-${{ github.run_id }}", s.With["key"])
						if strings.HasPrefix(s.Uses, "actions/cache/save@") {
							assert.Equal(t, "always()", s.If, "the checkpoint is saved even after a violation")
						} else {
							assert.Equal(t, "build-lock-history-checkpoint-", s.With["restore-keys"])
						}
					}
					if s.Run != "" {
						assert.NotContains(t, s.Run, "${{")
						assert.NotContains(t, strings.TrimSpace(s.Run), "\n", "one command per step")
						runs = append(runs, s.Run)
						env = s.Env
					}
				}
				require.Len(t, runs, 1)
				assert.True(t, strings.HasPrefix(runs[0], tc.command), runs[0])
				assert.Equal(t, "${{ github.token }}", env["GITHUB_TOKEN"])
				assert.Equal(t, "${{ vars.BUILD_LOCK_WRITER_LOGIN }}", env["BUILD_LOCK_WRITER_LOGIN"])
				if tc.file == "history-verify.yml" {
					assert.Equal(t, map[string]bool{"actions/cache/restore": true, "actions/cache/save": true}, keys)
					assert.Contains(t, runs[0], "--issue")
					assert.Contains(t, runs[0], "--checkpoint-dir .history-checkpoints")
				}
				runWorkflowCommand(t, runs[0])
			}
		})
	}
}

// runWorkflowCommand runs the workflow's command line against a generated
// history, with the environment the workflow sets.
func runWorkflowCommand(t *testing.T, line string) {
	t.Helper()
	f := newFixture(t, histgen.Options{Seed: 48, Jobs: 10})
	dir := t.TempDir()
	f.env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary.md")
	f.env["HISTORY_ACKNOWLEDGE"] = ""
	f.env["HISTORY_SINCE"] = "all"
	fields := strings.Fields(strings.TrimPrefix(line, "go run ./cmd/buildlock history "))
	var args []string
	for _, a := range fields {
		a = strings.Trim(a, `"`)
		if strings.HasPrefix(a, "$") {
			a = f.env[strings.TrimPrefix(a, "$")]
		}
		if a == ".history-checkpoints" || a == "history-report.html" {
			a = filepath.Join(dir, a)
		}
		args = append(args, a)
	}
	out, stderr, err := f.run(args...)
	require.NoError(t, err, "%s\n%s", out, stderr)
	assert.FileExists(t, f.env["GITHUB_STEP_SUMMARY"])
}
