package actioncontract_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

// The consumer workflow example: docs/examples/consumer-workflow.yml, shown
// verbatim in README.md between the two markers.
const (
	exampleWorkflow = "docs/examples/consumer-workflow.yml"
	readmeBegin     = "<!-- consumer-workflow:begin -->"
	readmeEnd       = "<!-- consumer-workflow:end -->"
	// checkoutPin is the one third-party action the example may use.
	checkoutPin = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
	// exampleRunnerLabel is the self-hosted label the example's licensed
	// job asks for (declared to actionlint, which rejects unknown labels).
	exampleRunnerLabel = "unity"
)

var (
	ownActionRE = regexp.MustCompile(`^` + regexp.QuoteMeta(thisRepository) + `/\.github/actions/([a-z0-9-]+)@([0-9a-f]{40})$`)
	stepOutRE   = regexp.MustCompile(`steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	exprRE      = regexp.MustCompile(`\$\{\{`)
)

// Node-typed fields are values, not pointers: go.yaml.in/yaml/v4 (rc.3)
// leaves a *yaml.Node field empty. Kind 0 means the key is absent.
type exampleWorkflowDoc struct {
	Permissions yaml.Node             `yaml:"permissions"`
	Concurrency yaml.Node             `yaml:"concurrency"`
	Jobs        map[string]exampleJob `yaml:"jobs"`
}

type exampleJob struct {
	Needs       any       `yaml:"needs"`
	If          string    `yaml:"if"`
	Permissions yaml.Node `yaml:"permissions"`
	Concurrency yaml.Node `yaml:"concurrency"`
	Strategy    *struct {
		FailFast any            `yaml:"fail-fast"`
		Matrix   map[string]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []exampleStep `yaml:"steps"`
}

type exampleStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

func readExample(t *testing.T) (string, exampleWorkflowDoc) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, exampleWorkflow))
	require.NoError(t, err)
	var wf exampleWorkflowDoc
	require.NoError(t, yaml.Unmarshal(raw, &wf), exampleWorkflow)
	require.NotEmpty(t, wf.Jobs, "%s has no jobs", exampleWorkflow)
	return string(raw), wf
}

// TestConsumerWorkflowExampleLints lints the example with actionlint (as a
// library; shellcheck too when installed) and fails on any finding.
func TestConsumerWorkflowExampleLints(t *testing.T) {
	t.Parallel()
	raw, _ := readExample(t)
	cfg := filepath.Join(t.TempDir(), "actionlint.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("self-hosted-runner:\n  labels: ["+exampleRunnerLabel+"]\n"), 0o600))
	opts := &actionlint.LinterOptions{ConfigFile: cfg}
	opts.Shellcheck = "shellcheck"
	if _, err := lookPath("shellcheck"); err != nil {
		opts.Shellcheck = ""
	}
	l, err := actionlint.NewLinter(io.Discard, opts)
	require.NoError(t, err)
	errs, err := l.Lint(exampleWorkflow, []byte(raw), nil)
	require.NoError(t, err)
	found := make([]string, 0, len(errs))
	for _, e := range errs {
		found = append(found, fmt.Sprintf("%s:%d:%d: %s [%s]", exampleWorkflow, e.Line, e.Column, e.Message, e.Kind))
	}
	assert.Empty(t, found, "actionlint")
}

// TestReadmeShowsTheConsumerWorkflowExample: README.md carries the example
// verbatim in a yaml fence between the consumer-workflow markers.
func TestReadmeShowsTheConsumerWorkflowExample(t *testing.T) {
	t.Parallel()
	raw, _ := readExample(t)
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), readmeBegin+"\n")
	block, _, ok2 := strings.Cut(after, readmeEnd)
	require.False(t, !ok || !ok2, "README.md has no %s ... %s section", readmeBegin, readmeEnd)
	body, ok := strings.CutPrefix(block, "```yaml\n")
	body, ok2 = strings.CutSuffix(body, "```\n")
	require.False(t, !ok || !ok2, "README.md: the consumer workflow must be one ```yaml fence directly between the markers")
	assert.Equal(t, raw, body, "README.md's consumer workflow differs from %s at line %d; copy the file into the README section", exampleWorkflow, firstDiffLine(raw, body))
	assert.Contains(t, string(readme), "(docs/actions.md)", "README.md does not link docs/actions.md")
}

// TestConsumerWorkflowExampleFollowsThePattern checks what actionlint
// cannot: the example only uses this repository's actions (pinned to one
// commit, with declared inputs and outputs) and the pinned checkout, and it
// follows the consumer workflow pattern.
func TestConsumerWorkflowExampleFollowsThePattern(t *testing.T) {
	t.Parallel()
	_, wf := readExample(t)
	actions := loadActions(t)
	assert.False(t, wf.Permissions.Kind != yaml.MappingNode || len(wf.Permissions.Content) != 0, "the workflow must set permissions: {} and grant per job")
	checkConcurrency(t, "workflow", &wf.Concurrency)
	pins := map[string]bool{}
	used := map[string]bool{}
	for name, job := range wf.Jobs {
		checkConcurrency(t, "job "+name, &job.Concurrency)
		checkJobPermissions(t, name, &job.Permissions)
		if job.Strategy != nil && job.Strategy.Matrix != nil {
			assert.Equal(t, false, job.Strategy.FailFast, "job %s: a matrix needs a literal strategy.fail-fast: false", name)
		}
		stepAction := map[string]string{}
		acquireID := ""
		for i, st := range job.Steps {
			where := fmt.Sprintf("job %s step %d (%s)", name, i+1, st.Name)
			assert.False(t, exprRE.MatchString(st.Run), "%s: no ${{ }} in run: (pass values through env:)", where)
			for k, v := range st.With {
				assert.NotContains(t, v, "secrets.", "%s: secret passed as input %s; pass secrets through env:", where, k)
			}
			if st.Uses == "" {
				assert.False(t, acquireID != "" && st.If == "", "%s: a step after acquire must be guarded on steps.%s.outputs.acquired == 'true'", where, acquireID)
				assert.False(t, acquireID != "" && !strings.Contains(st.If, "steps."+acquireID+".outputs.acquired == 'true'"), "%s: licensed step not guarded on steps.%s.outputs.acquired == 'true' (if: %q)", where, acquireID, st.If)
				continue
			}
			if st.Uses == checkoutPin {
				continue
			}
			m := ownActionRE.FindStringSubmatch(st.Uses)
			if !assert.NotNil(t, m, "%s: uses %q is neither an action of %s pinned to a 40-hex commit nor %s", where, st.Uses, thisRepository, checkoutPin) {
				continue
			}
			action, pin := m[1], m[2]
			pins[pin] = true
			used[action] = true
			meta, ok := actions[action]
			if !assert.True(t, ok, "%s: no action %s under .github/actions", where, action) {
				continue
			}
			checkWith(t, where, action, meta, st.With)
			if st.ID != "" {
				stepAction[st.ID] = action
			}
			switch action {
			case "acquire-build-lock", "acquire-build-lock-with-cleanup":
				acquireID = st.ID
				assert.NotEmpty(t, st.ID, "%s: the acquire step needs an id", where)
				for _, k := range []string{"BUILD_LOCK_APP_ID", "BUILD_LOCK_APP_PRIVATE_KEY"} {
					assert.Equal(t, "${{ secrets."+k+" }}", st.Env[k], "%s: env %s must be ${{ secrets.%s }}", where, k, k)
				}
			case "release-build-lock":
				assert.Equal(t, "${{always()}}", strings.ReplaceAll(st.If, " ", ""), "%s: release must run with if: ${{ always() }}, got %q", where, st.If)
				if !assert.NotEmpty(t, acquireID, "%s: release without an earlier acquire in the job", where) {
					break
				}
				acq := job.Steps[slices.IndexFunc(job.Steps, func(s exampleStep) bool { return s.ID == acquireID })]
				for _, k := range []string{"lock-name", "holder-id-suffix", "runner-id", "lock-repository", "state-branch"} {
					assert.Equal(t, st.With[k], acq.With[k], "%s: %s %q differs from acquire's %q", where, k, st.With[k], acq.With[k])
				}
				for _, k := range []string{"BUILD_LOCK_APP_ID", "BUILD_LOCK_APP_PRIVATE_KEY"} {
					assert.Equal(t, "${{ secrets."+k+" }}", st.Env[k], "%s: env %s must be ${{ secrets.%s }}", where, k, k)
				}
				acquireID = "" // the steps after release are not licensed
			}
		}
		// Every steps.<id>.outputs.<name> of one of our actions names a
		// declared output.
		raw, _ := yaml.Marshal(job)
		for _, m := range stepOutRE.FindAllStringSubmatch(string(raw), -1) {
			action, ok := stepAction[m[1]]
			if !ok {
				continue
			}
			assert.Contains(t, actions[action].Outputs, m[2], "job %s: steps.%s.outputs.%s: %s has no output %s", name, m[1], m[2], action, m[2])
		}
	}
	assert.Len(t, pins, 1, "every action of this repository must be pinned to the same commit, got %v", pins)
	for _, want := range []string{"require-current-pr-head", "acquire-build-lock", "release-build-lock"} {
		assert.True(t, used[want], "the example does not use %s", want)
	}
	gate := 0
	for _, job := range wf.Jobs {
		if strings.ReplaceAll(job.If, " ", "") == "${{always()}}" && job.Needs != nil {
			gate++
		}
	}
	assert.NotZero(t, gate, "no always-reporting gate job (needs: ... with if: ${{ always() }})")
}

// checkConcurrency: a concurrency scope, when present, is a mapping with a
// literal cancel-in-progress: false.
func checkConcurrency(t *testing.T, where string, n *yaml.Node) {
	t.Helper()
	if n.Kind == 0 {
		return
	}
	if !assert.Equal(t, yaml.MappingNode, n.Kind, "%s: concurrency must be a mapping with cancel-in-progress: false", where) {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "cancel-in-progress" {
			v := n.Content[i+1]
			assert.False(t, v.Tag != "!!bool" || v.Value != "false", "%s: cancel-in-progress must be the literal false, got %q", where, v.Value)
			return
		}
	}
	assert.Fail(t, where+": concurrency without a literal cancel-in-progress: false")
}

// checkJobPermissions: every job declares its permissions, none of them
// write.
func checkJobPermissions(t *testing.T, job string, n *yaml.Node) {
	t.Helper()
	if !assert.Equal(t, yaml.MappingNode, n.Kind, "job %s: declare permissions as a mapping (least privilege)", job) {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		assert.Contains(t, []string{"read", "none"}, n.Content[i+1].Value, "job %s: permission %s; consumer jobs need read access only", job, n.Content[i].Value)
	}
}

// checkWith: every with: key is a declared input and every required input
// is given.
func checkWith(t *testing.T, where, action string, meta actioncontract.Metadata, with map[string]string) {
	t.Helper()
	for k := range with {
		assert.Contains(t, meta.Inputs, k, "%s: %s has no input %q", where, action, k)
	}
	for name, in := range meta.Inputs {
		assert.False(t, in.Required != nil && *in.Required && strings.TrimSpace(with[name]) == "", "%s: required input %s of %s is missing", where, name, action)
	}
}
