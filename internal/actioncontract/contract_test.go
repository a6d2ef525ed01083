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

// TestEveryActionDirectoryIsInTheShape: every directory under
// .github/actions, including one added later, is a registered action whose
// action.yml is byte for byte the canonical shape (docs/packaging.md
// "Action shape"). An action still in the old one-bash-step shape fails with
// the exact runs: section it must have and the command that writes it.
func TestEveryActionDirectoryIsInTheShape(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(filepath.Join(repoRoot, ".github", "actions"))
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf(".github/actions/%s: only action directories belong here", e.Name())
			continue
		}
		dir := e.Name()
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			f, err := actioncontract.ReadActionFile(repoRoot, dir)
			require.NoError(t, err, "every directory under .github/actions needs an action.yml")
			reg, ok := actioncontract.Registry[dir]
			require.True(t, ok, "%s: add a Registry entry (binary, inputs, outputs) in internal/actioncontract/registry.go", dir)
			if reg.Node {
				require.Equal(t, withCleanup, dir, "only %s may be a node24 action (it needs post:)", withCleanup)
				return
			}
			want, err := f.Canonical(reg)
			require.NoError(t, err)
			if string(want) == string(f.Raw) {
				return
			}
			got, exp := strings.Split(string(f.Raw), "\n"), strings.Split(string(want), "\n")
			line := 0
			for line < len(got) && line < len(exp) && got[line] == exp[line] {
				line++
			}
			gotLine, wantLine := "<end of file>", "<end of file>"
			if line < len(got) {
				gotLine = got[line]
			}
			if line < len(exp) {
				wantLine = exp[line]
			}
			t.Errorf("%s/action.yml is not in the canonical shape (docs/packaging.md \"Action shape\"): "+
				"a bash step for Linux and macOS plus a Windows PowerShell step, outputs taken from whichever ran.\n"+
				"Fix: go run ./tools/actionshape -w %s\n"+
				"first difference at line %d:\n  have: %s\n  want: %s\n"+
				"every output's value: must be %s, and the runs: section must be:\n%s",
				dir, dir, line+1, gotLine, wantLine, actioncontract.OutputValue("<name>"), actioncontract.RenderCompositeRuns(reg, f.Inputs))
		})
	}
}

// runnerEnv is what the runner gives the binary of one entry point of an
// action: for a composite step its env: mapping evaluated with every input
// set to a distinct value; for the node24 action the runner's own INPUT_*
// variables (hyphens kept, https://github.com/actions/runner/issues/665).
func runnerEnv(t *testing.T, m actioncontract.Metadata, step *actioncontract.Step) map[string]string {
	t.Helper()
	env := map[string]string{}
	if step == nil {
		for name := range m.Inputs {
			env["INPUT_"+strings.ToUpper(strings.ReplaceAll(name, " ", "_"))] = "value of " + name
		}
		return env
	}
	inputRef := regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`)
	for k, v := range step.Env {
		if sub := inputRef.FindStringSubmatch(v); sub != nil {
			env[k] = "value of " + sub[1]
		} else if v == "${{ github.action_repository }}" {
			env[k] = "owner/repo"
		} else {
			env[k] = v
		}
	}
	return env
}

// TestEveryInputReachesTheBinaryInEveryEntryPoint proves, through
// internal/actionio itself, that the binary reads every declared input with
// its own value from each entry point: the POSIX and the Windows step of a
// composite action (underscore spelling, mapped in env:) and the node24
// action's main and post (the runner's hyphenated spelling). Those are the
// two spellings the binary reads (actionio.InputEnvNames).
func TestEveryInputReachesTheBinaryInEveryEntryPoint(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			entries := map[string]*actioncontract.Step{}
			if strings.HasPrefix(m.Runs.Using, "node") {
				entries["node main/post"] = nil
			} else {
				for _, goos := range []string{"linux", "darwin", "windows"} {
					st, ok := m.StepFor(goos)
					require.True(t, ok, "no step runs on %s", goos)
					entries[goos+" step "+st.ID] = &st
				}
			}
			for entry, st := range entries {
				env := runnerEnv(t, m, st)
				a := actionio.New(func(k string) string { return env[k] }, io.Discard)
				for name := range m.Inputs {
					spellings := actionio.InputEnvNames(name)
					found := false
					for k := range env {
						found = found || slices.Contains(spellings, k)
					}
					assert.True(t, found, "%s: input %s is passed under none of %v", entry, name, spellings)
					assert.Equal(t, "value of "+name, a.Input(name), "%s: input %s does not reach the binary", entry, name)
				}
				if st != nil {
					assert.Equal(t, "owner/repo", a.ActionRepository(), "%s: the action repository must reach the binary", entry)
				}
			}
		})
	}
}

// TestNoActionNeedsBashOrGoOnWindows: each composite action runs its binary
// through Windows PowerShell 5.1 on Windows and bash only on Linux and
// macOS (the two conditions cover every runner.os exactly once); the node24
// action's shim starts Windows PowerShell on Windows. Neither launcher needs
// Go when the manifest lists the asset: the launcher case table
// (launchercases_test.go) runs the release-asset cases with no Go on PATH.
func TestNoActionNeedsBashOrGoOnWindows(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		if strings.HasPrefix(m.Runs.Using, "node") {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			reg := actioncontract.Registry[dir]
			require.Len(t, m.Runs.Steps, 2, "one step per OS family")
			win, ok := m.StepFor("windows")
			require.True(t, ok)
			assert.Equal(t, actioncontract.WindowsShell, win.Shell)
			assert.Equal(t, actioncontract.WindowsRun(reg.Binary, reg.Args...), win.Run)
			assert.NotContains(t, win.Run, "bash")
			posix, ok := m.StepFor("linux")
			require.True(t, ok)
			assert.Equal(t, actioncontract.PosixShell, posix.Shell)
			assert.Equal(t, actioncontract.PosixRun(reg.Binary, reg.Args...), posix.Run)
			for _, st := range m.Runs.Steps {
				assert.NotContains(t, st.Run, "go run", "%s step %s", dir, st.ID)
				assert.NotContains(t, st.Run, "go build", "%s step %s", dir, st.ID)
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

var launcherRun = regexp.MustCompile(`tools/launcher/launch\.(sh|ps1)" [a-z][a-z0-9-]*( [A-Za-z0-9._=-]+)*$`)

func TestEveryRunStepUsesTheLauncher(t *testing.T) {
	t.Parallel()
	for dir, m := range loadActions(t) {
		for i, s := range m.Runs.Steps {
			if s.Run == "" {
				continue
			}
			assert.Regexp(t, launcherRun, strings.TrimSpace(s.Run), "%s step %d", dir, i)
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
