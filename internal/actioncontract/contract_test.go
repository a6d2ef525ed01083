package actioncontract_test

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

const repoRoot = "../.."

// withCleanup is the one action allowed (and required) to have post:.
const withCleanup = "acquire-build-lock-with-cleanup"

func loadActions(t *testing.T) map[string]actioncontract.Metadata {
	t.Helper()
	actions, err := actioncontract.LoadActions(repoRoot)
	require.NoError(t, err)
	require.NotEmpty(t, actions)
	return actions
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func TestEveryActionIsRegisteredAndViceVersa(t *testing.T) {
	t.Parallel()
	actions := loadActions(t)
	assert.Equal(t, sortedKeys(actioncontract.Registry), sortedKeys(actions))
}

func TestDeclaredInterfaceMatchesRegistry(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		reg, ok := actioncontract.Registry[dir]
		if !ok {
			continue // reported by TestEveryActionIsRegisteredAndViceVersa
		}
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			assert.NotEmpty(t, m.Name)
			assert.NotEmpty(t, m.Description)
			assert.Equal(t, sorted(reg.Inputs), sortedKeys(m.Inputs), "inputs")
			assert.Equal(t, sorted(reg.Outputs), sortedKeys(m.Outputs), "outputs")
			for name, in := range m.Inputs {
				assert.NotEmpty(t, in.Description, "input %s description", name)
				require.NotNil(t, in.Required, "input %s must state required:", name)
				if *in.Required {
					assert.Nil(t, in.Default, "required input %s must not have a default", name)
				} else {
					assert.NotNil(t, in.Default, "optional input %s must state its default", name)
				}
			}
			for name, out := range m.Outputs {
				assert.NotEmpty(t, out.Description, "output %s description", name)
			}
		})
	}
}

// launchLine is the exact run: of every composite action. It uses the
// GITHUB_ACTION_PATH environment variable rather than ${{ github.action_path }}
// so that run: contains no expression at all.
func launchLine(binary string, args ...string) string {
	return strings.Join(append([]string{`exec bash "$GITHUB_ACTION_PATH/../../../tools/launcher/launch.sh"`, binary}, args...), " ")
}

func TestCompositeActionsMapEveryInputAndOutput(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		reg, ok := actioncontract.Registry[dir]
		if !ok || reg.Node {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, "composite", m.Runs.Using)
			require.Len(t, m.Runs.Steps, 1, "one step that runs the binary")
			step := m.Runs.Steps[0]
			assert.Equal(t, "run", step.ID)
			assert.Equal(t, "bash", step.Shell)
			assert.Equal(t, launchLine(reg.Binary, reg.Args...), strings.TrimSpace(step.Run))

			wantEnv := map[string]string{
				"BUILD_LOCK_ACTION_REPOSITORY": "${{ github.action_repository }}",
			}
			for name := range m.Inputs {
				spellings := actionio.InputEnvNames(name)
				// The composite spelling is the underscore one, which actionio
				// reads as its fallback (see internal/actionio doc.go).
				wantEnv[spellings[len(spellings)-1]] = "${{ inputs." + name + " }}"
			}
			assert.Equal(t, wantEnv, step.Env)
			for name, out := range m.Outputs {
				assert.Equal(t, "${{ steps.run.outputs."+name+" }}", out.Value, "output %s", name)
			}
		})
	}
}

func TestNoExpressionsInRunScripts(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		for i, s := range m.Runs.Steps {
			assert.NotContains(t, s.Run, "${{", "%s step %d: run: must not interpolate expressions (script injection); pass values through env:", dir, i)
		}
	}
}

// launcherRun: the launcher, the binary, and optionally one mode argument
// of the same grammar (cmd/classify <mode>).
var launcherRun = regexp.MustCompile(`tools/launcher/launch\.sh"? [a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$`)

func TestEveryRunStepUsesTheLauncher(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		for i, s := range m.Runs.Steps {
			if s.Run == "" {
				continue
			}
			assert.Regexp(t, launcherRun, strings.TrimSpace(s.Run), "%s step %d", dir, i)
			assert.NotContains(t, s.Run, "go run", "%s step %d", dir, i)
			assert.NotContains(t, s.Run, "GITHUB_PATH", "%s step %d", dir, i)
			assert.NotContains(t, s.Run, "GITHUB_ENV", "%s step %d", dir, i)
		}
	}
}

func TestNodeActions(t *testing.T) {
	t.Parallel()
	actions := loadActions(t)
	for dir, m := range actions {
		if dir != withCleanup {
			assert.Empty(t, m.Runs.Post, "%s: only %s may have post:", dir, withCleanup)
			assert.Empty(t, m.Runs.Pre, "%s: no pre:", dir)
		}
		if strings.HasPrefix(m.Runs.Using, "node") {
			assert.Equal(t, "node24", m.Runs.Using, dir)
			assert.True(t, actioncontract.Registry[dir].Node, "%s is node but not registered as such", dir)
		}
	}
	m, ok := actions[withCleanup]
	require.True(t, ok)
	assert.Equal(t, "node24", m.Runs.Using)
	assert.Equal(t, "main.js", m.Runs.Main)
	assert.Equal(t, "post.js", m.Runs.Post)
	for file, mode := range map[string]string{"main.js": "main", "post.js": "post"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "actions", withCleanup, file))
		require.NoError(t, err)
		assert.Contains(t, string(b), `require("../../../tools/launcher/node-shim.js").run("`+mode+`");`)
	}

	// Spec §1.3: same inputs (with defaults) and outputs as acquire-build-lock.
	plain := actions["acquire-build-lock"]
	assert.Equal(t, plain.Inputs, m.Inputs)
	assert.Equal(t, sortedKeys(plain.Outputs), sortedKeys(m.Outputs))
	assert.Equal(t, actioncontract.Registry["acquire-build-lock"].Binary, actioncontract.Registry[withCleanup].Binary)
}

func TestActionlintWorkflows(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	// Shellcheck runs when installed (actionlint skips it otherwise).
	opts := &actionlint.LinterOptions{WorkingDir: repoRoot}
	opts.Shellcheck = "shellcheck"
	if _, err := lookPath("shellcheck"); err != nil {
		opts.Shellcheck = ""
	}
	l, err := actionlint.NewLinter(io.Discard, opts)
	require.NoError(t, err)
	errs, err := l.LintFiles(files, nil)
	require.NoError(t, err)
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}
