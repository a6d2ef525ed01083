package fakeeditor

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

// Runner is the part of a self-hosted runner the Unity actions see: a
// RUNNER_TEMP, a tool cache, run identity and the step's file commands.
// Env is the environment of the next step; Step clears the file commands.
type Runner struct {
	T          testing.TB
	RunnerTemp string
	ToolCache  string
	mu         sync.Mutex
	Env        map[string]string
	dir        string
	step       int
	read       map[string]bool
}

// NewRunner returns a runner of run 4242 attempt 1.
func NewRunner(t testing.TB) *Runner {
	t.Helper()
	base := t.TempDir()
	r := &Runner{T: t, RunnerTemp: filepath.Join(base, "_temp"), ToolCache: filepath.Join(base, "_tool"), dir: base}
	for _, d := range []string{r.RunnerTemp, r.ToolCache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.Env = map[string]string{
		"RUNNER_TEMP": r.RunnerTemp, "RUNNER_TOOL_CACHE": r.ToolCache,
		"GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_ACTIONS": "true",
		"USERNAME": "runner", "PATH": "/usr/bin:/bin",
	}
	r.Step()
	return r
}

// InstallEditor installs the fake as the managed editor of version in the
// canonical layout under <tool cache>/u6-v3 and returns its path.
func (r *Runner) InstallEditor(version string) string {
	return Install(r.T, filepath.Join(r.ToolCache, "u6-v3", version, "Editor", "Unity.exe"))
}

// Step starts a new step: fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files
// and no inputs.
func (r *Runner) Step() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.step++
	for k := range r.Env {
		if strings.HasPrefix(k, "INPUT_") {
			delete(r.Env, k)
		}
	}
	for name, env := range map[string]string{"output": "GITHUB_OUTPUT", "summary": "GITHUB_STEP_SUMMARY"} {
		p := filepath.Join(r.dir, name+"-"+strconv.Itoa(r.step))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			r.T.Fatal(err)
		}
		r.Env[env] = p
	}
}

// Input sets an input of the current step (composite spelling).
func (r *Runner) Input(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := actionio.InputEnvNames(name)
	r.Env[n[len(n)-1]] = value
}

// Getenv reads the runner environment, recording every input looked up.
func (r *Runner) Getenv(k string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
		if r.read == nil {
			r.read = map[string]bool{}
		}
		r.read[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] = true
	}
	return r.Env[k]
}

// InputsRead returns, sorted, the names of the inputs the code under test
// looked up (in either spelling) since the runner was made.
func (r *Runner) InputsRead() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.read))
	for k := range r.read {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Outputs reads the current step's outputs as a later step would.
func (r *Runner) Outputs() map[string]string {
	out, err := actionio.ReadFileCommands(r.Getenv("GITHUB_OUTPUT"))
	if err != nil {
		r.T.Fatal(err)
	}
	return out
}

// OutputOrder returns the output names of the current step in the order
// they were first written (heredoc entries, as go-githubactions writes).
func (r *Runner) OutputOrder() []string {
	b, err := os.ReadFile(r.Getenv("GITHUB_OUTPUT"))
	if err != nil {
		r.T.Fatal(err)
	}
	var names []string
	seen := map[string]bool{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		for i++; i < len(lines) && lines[i] != delim; i++ {
		}
	}
	return names
}

// Summary reads the current step's job summary.
func (r *Runner) Summary() string {
	b, err := os.ReadFile(r.Getenv("GITHUB_STEP_SUMMARY"))
	if err != nil {
		r.T.Fatal(err)
	}
	return string(b)
}

// AssertContract checks that the step just run read exactly the inputs and
// wrote exactly the outputs the action's Registry entry (its action.yml)
// declares: the binary and its metadata cannot drift apart.
func (r *Runner) AssertContract(t testing.TB, action string) {
	t.Helper()
	reg, ok := actioncontract.Registry[action]
	if !ok {
		t.Fatalf("no Registry entry for %s", action)
	}
	if got, want := r.InputsRead(), slices.Sorted(slices.Values(reg.Inputs)); !slices.Equal(got, want) {
		t.Errorf("%s read inputs %v, its action.yml declares %v", action, got, want)
	}
	if got, want := slices.Sorted(maps.Keys(r.Outputs())), slices.Sorted(slices.Values(reg.Outputs)); !slices.Equal(got, want) {
		t.Errorf("%s wrote outputs %v, its action.yml declares %v", action, got, want)
	}
}
