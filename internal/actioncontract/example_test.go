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
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		require.FailNowf(t, "consumer workflow", "%s: %v", exampleWorkflow, err)
	}
	if len(wf.Jobs) == 0 {
		require.FailNowf(t, "consumer workflow", "%s has no jobs", exampleWorkflow)
	}
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
	for _, e := range errs {
		assert.Failf(t, "consumer workflow", "%s:%d:%d: %s [%s]", exampleWorkflow, e.Line, e.Column, e.Message, e.Kind)
	}
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
	if !ok || !ok2 {
		require.FailNowf(t, "consumer workflow", "README.md has no %s ... %s section", readmeBegin, readmeEnd)
	}
	body, ok := strings.CutPrefix(block, "```yaml\n")
	body, ok2 = strings.CutSuffix(body, "```\n")
	if !ok || !ok2 {
		require.FailNowf(t, "consumer workflow", "README.md: the consumer workflow must be one ```yaml fence directly between the markers")
	}
	if body != raw {
		assert.Failf(t, "consumer workflow", "README.md's consumer workflow differs from %s at line %d; copy the file into the README section", exampleWorkflow, firstDiffLine(raw, body))
	}
	if !strings.Contains(string(readme), "(docs/actions.md)") {
		assert.Fail(t, "README.md does not link docs/actions.md")
	}
}

// exampleActions returns the metadata of every action of this repository.
func exampleActions(t *testing.T) map[string]actioncontract.Metadata {
	t.Helper()
	return loadActions(t)
}

// secretInputs are the inputs of our actions that take a secret as their
// value by contract (the reference passes them as inputs); every other
// secret goes through env:.
var secretInputs = map[string][]string{
	"check-unity-runner-availability": {"reader-app-id", "reader-app-private-key"},
	"return-unity-license":            {"unity-email", "unity-password"},
}

// licensedOrder is the consumer pattern's order of our actions in the
// licensed job (reference "Consumer Workflow Pattern").
var licensedOrder = []string{"require-current-pr-head", "ensure-unity-editor", "validate-unity-license", "acquire-build-lock",
	"return-unity-license", "classify-unity-cleanup-evidence", "release-build-lock", "require-confirmed-unity-cleanup"}

// fallbackHolderRE is the stable v1 holder id a hosted fallback
// reconstructs: <repository>:<run id>:<source job>:<holder-id-suffix>.
var fallbackHolderRE = regexp.MustCompile(`^\$\{\{ github\.repository \}\}:\$\{\{ github\.run_id \}\}:([A-Za-z0-9_-]+):(.+)$`)

var needsResultRE = regexp.MustCompile(`^\$\{\{ needs\.([A-Za-z0-9_-]+)\.(result|outputs\.[A-Za-z0-9_-]+) \}\}$`)

// TestConsumerWorkflowExampleFollowsThePattern checks what actionlint
// cannot: the example only uses this repository's actions (pinned to one
// commit, with declared inputs and outputs) and the pinned checkout, and it
// follows the consumer workflow pattern end to end.
func TestConsumerWorkflowExampleFollowsThePattern(t *testing.T) {
	t.Parallel()
	_, wf := readExample(t)
	actions := exampleActions(t)
	if wf.Permissions.Kind != yaml.MappingNode || len(wf.Permissions.Content) != 0 {
		assert.Fail(t, "the workflow must set permissions: {} and grant per job")
	}
	checkConcurrency(t, "workflow", &wf.Concurrency)
	pins := map[string]bool{}
	used := map[string]bool{}
	acquireOf := map[string]exampleStep{} // job → its acquire step
	type fallbackRelease struct {
		job, source, suffix string
		st                  exampleStep
	}
	var fallbacks []fallbackRelease
	for name, job := range wf.Jobs {
		checkConcurrency(t, "job "+name, &job.Concurrency)
		checkJobPermissions(t, name, &job.Permissions)
		if job.Strategy != nil && job.Strategy.Matrix != nil {
			if ff, ok := job.Strategy.FailFast.(bool); !ok || ff {
				assert.Failf(t, "consumer workflow", "job %s: a matrix needs a literal strategy.fail-fast: false", name)
			}
		}
		stepAction := map[string]string{}
		acquireID := ""
		var order []string
		for i, st := range job.Steps {
			where := fmt.Sprintf("job %s step %d (%s)", name, i+1, st.Name)
			if exprRE.MatchString(st.Run) {
				assert.Failf(t, "consumer workflow", "%s: no ${{ }} in run: (pass values through env:)", where)
			}
			action := ""
			if m := ownActionRE.FindStringSubmatch(st.Uses); m != nil {
				action = m[1]
			}
			for k, v := range st.With {
				if strings.Contains(v, "secrets.") && !slices.Contains(secretInputs[action], k) {
					assert.Failf(t, "consumer workflow", "%s: secret passed as input %s; pass secrets through env:", where, k)
				}
			}
			if st.Uses == "" {
				if acquireID != "" && st.If == "" {
					assert.Failf(t, "consumer workflow", "%s: a step after acquire must be guarded on steps.%s.outputs.acquired == 'true'", where, acquireID)
				}
				if acquireID != "" && !strings.Contains(st.If, "steps."+acquireID+".outputs.acquired == 'true'") {
					assert.Failf(t, "consumer workflow", "%s: licensed step not guarded on steps.%s.outputs.acquired == 'true' (if: %q)", where, acquireID, st.If)
				}
				continue
			}
			if st.Uses == checkoutPin {
				continue
			}
			m := ownActionRE.FindStringSubmatch(st.Uses)
			if m == nil {
				assert.Failf(t, "consumer workflow", "%s: uses %q is neither an action of %s pinned to a 40-hex commit nor %s", where, st.Uses, thisRepository, checkoutPin)
				continue
			}
			pin := m[2]
			pins[pin] = true
			used[action] = true
			order = append(order, action)
			meta, ok := actions[action]
			if !ok {
				assert.Failf(t, "consumer workflow", "%s: no action %s under .github/actions", where, action)
				continue
			}
			checkWith(t, where, action, meta, st.With)
			if st.ID != "" {
				stepAction[st.ID] = action
			}
			switch action {
			case "acquire-build-lock", "acquire-build-lock-with-cleanup":
				acquireID = st.ID
				acquireOf[name] = st
				if st.ID == "" {
					assert.Failf(t, "consumer workflow", "%s: the acquire step needs an id", where)
				}
				requireAppEnv(t, where, st)
			case "validate-unity-license":
				for _, k := range []string{"UNITY_SERIAL", "UNITY_EMAIL", "UNITY_PASSWORD"} {
					if st.Env[k] != "${{ secrets."+k+" }}" {
						assert.Failf(t, "consumer workflow", "%s: env %s must be ${{ secrets.%s }}", where, k, k)
					}
				}
			case "return-unity-license", "classify-unity-cleanup-evidence":
				if acquireID == "" || strings.ReplaceAll(st.If, " ", "") != "${{always()&&steps."+acquireID+".outputs.acquired=='true'}}" {
					assert.Failf(t, "consumer workflow", "%s: %s must run with if: ${{ always() && steps.<acquire>.outputs.acquired == 'true' }}, got %q", where, action, st.If)
				}
			case "require-confirmed-unity-cleanup":
				if strings.ReplaceAll(st.If, " ", "") != "${{always()}}" {
					assert.Failf(t, "consumer workflow", "%s: the cleanup gate must run with if: ${{ always() }}, got %q", where, st.If)
				}
			case "release-build-lock":
				if strings.ReplaceAll(st.If, " ", "") != "${{always()}}" {
					assert.Failf(t, "consumer workflow", "%s: release must run with if: ${{ always() }}, got %q", where, st.If)
				}
				requireAppEnv(t, where, st)
				if holder := st.With["holder-id"]; holder != "" {
					// A hosted fallback: the exact stable identity of a
					// leg of another job, checked against that job below.
					hm := fallbackHolderRE.FindStringSubmatch(holder)
					if hm == nil {
						assert.Failf(t, "consumer workflow", "%s: a fallback holder-id must be ${{ github.repository }}:${{ github.run_id }}:<job>:<holder-id-suffix>, got %q", where, holder)
						break
					}
					fallbacks = append(fallbacks, fallbackRelease{job: name, source: hm[1], suffix: hm[2], st: st})
					break
				}
				if acquireID == "" {
					assert.Failf(t, "consumer workflow", "%s: release without an earlier acquire in the job (and without an explicit holder-id)", where)
					break
				}
				acq := job.Steps[slices.IndexFunc(job.Steps, func(s exampleStep) bool { return s.ID == acquireID })]
				for _, k := range []string{"lock-name", "holder-id-suffix", "runner-id", "lock-repository", "state-branch"} {
					if acq.With[k] != st.With[k] {
						assert.Failf(t, "consumer workflow", "%s: %s %q differs from acquire's %q", where, k, st.With[k], acq.With[k])
					}
				}
				// The typed cleanup report comes from the evidence
				// classifier of the same job.
				for _, k := range []string{"resource-cleanup-status", "resource-health", "resource-reason"} {
					if m := stepOutRE.FindStringSubmatch(st.With[k]); m == nil || stepAction[m[1]] != "classify-unity-cleanup-evidence" || m[2] != k {
						assert.Failf(t, "consumer workflow", "%s: %s must be the evidence classifier's %s output, got %q", where, k, k, st.With[k])
					}
				}
				acquireID = "" // the steps after release are not licensed
			}
		}
		if _, ok := acquireOf[name]; ok {
			checkOrder(t, name, order)
		}
		// Every steps.<id>.outputs.<name> of one of our actions names a
		// declared output.
		raw, _ := yaml.Marshal(job)
		for _, m := range stepOutRE.FindAllStringSubmatch(string(raw), -1) {
			action, ok := stepAction[m[1]]
			if !ok {
				continue
			}
			if _, ok := actions[action].Outputs[m[2]]; !ok {
				assert.Failf(t, "consumer workflow", "job %s: steps.%s.outputs.%s: %s has no output %s", name, m[1], m[2], action, m[2])
			}
		}
	}
	for _, f := range fallbacks {
		acq, ok := acquireOf[f.source]
		if !ok {
			assert.Failf(t, "consumer workflow", "job %s: the fallback release names job %s, which does not acquire", f.job, f.source)
			continue
		}
		if f.suffix != acq.With["holder-id-suffix"] || f.st.With["lock-name"] != acq.With["lock-name"] {
			assert.Failf(t, "consumer workflow", "job %s: the fallback release's holder id (suffix %q, lock %q) is not job %s's (suffix %q, lock %q)",
				f.job, f.suffix, f.st.With["lock-name"], f.source, acq.With["holder-id-suffix"], acq.With["lock-name"])
		}
		if !needsJob(wf.Jobs[f.job].Needs, f.source) || !strings.HasPrefix(strings.ReplaceAll(wf.Jobs[f.job].If, " ", ""), "${{always()") {
			assert.Failf(t, "consumer workflow", "job %s: a fallback needs %s and runs if: ${{ always() && ... }}", f.job, f.source)
		}
	}
	if len(pins) != 1 {
		assert.Failf(t, "consumer workflow", "every action of this repository must be pinned to the same commit, got %v", pins)
	}
	for _, want := range append([]string{"check-unity-runner-availability", "classify-unity-changes", "require-unity-validation"}, licensedOrder...) {
		if !used[want] {
			assert.Failf(t, "consumer workflow", "the example does not use %s", want)
		}
	}
	if len(fallbacks) == 0 {
		assert.Fail(t, "no hosted fallback release (release-build-lock with the source job's holder-id)")
	}
	checkGate(t, wf)
}

// requireAppEnv: the lock's App credentials reach acquire and release
// through env: from secrets.
func requireAppEnv(t *testing.T, where string, st exampleStep) {
	t.Helper()
	for _, k := range []string{"BUILD_LOCK_APP_ID", "BUILD_LOCK_APP_PRIVATE_KEY"} {
		if st.Env[k] != "${{ secrets."+k+" }}" {
			assert.Failf(t, "consumer workflow", "%s: env %s must be ${{ secrets.%s }}", where, k, k)
		}
	}
}

// checkOrder: a licensed job runs our actions in the pattern's order.
func checkOrder(t *testing.T, job string, got []string) {
	t.Helper()
	var filtered []string
	for _, a := range got {
		if slices.Contains(licensedOrder, a) {
			filtered = append(filtered, a)
		}
	}
	if !slices.Equal(filtered, licensedOrder) {
		assert.Failf(t, "consumer workflow", "job %s: the licensed steps must run in the order %v, got %v", job, licensedOrder, filtered)
	}
}

func needsJob(needs any, job string) bool {
	switch v := needs.(type) {
	case string:
		return v == job
	case []any:
		for _, n := range v {
			if n == job {
				return true
			}
		}
	}
	return false
}

// checkGate: one always-reporting job calls require-unity-validation, needs
// every other job, and passes each input from exactly the right place.
func checkGate(t *testing.T, wf exampleWorkflowDoc) {
	t.Helper()
	gates := 0
	for name, job := range wf.Jobs {
		for _, st := range job.Steps {
			m := ownActionRE.FindStringSubmatch(st.Uses)
			if m == nil || m[1] != "require-unity-validation" {
				continue
			}
			gates++
			if strings.ReplaceAll(job.If, " ", "") != "${{always()}}" {
				assert.Failf(t, "consumer workflow", "job %s: the aggregate gate job must run with if: ${{ always() }}", name)
			}
			for other := range wf.Jobs {
				if other != name && !needsJob(job.Needs, other) {
					assert.Failf(t, "consumer workflow", "job %s: the aggregate gate must need every job, not %s", name, other)
				}
			}
			for input, want := range map[string]string{
				"static-validation-result": "result", "classifier-result": "result", "unity-required": "outputs.unity-required",
				"trusted-revision": "outputs.trusted-revision", "preflight-result": "result", "unity-result": "result",
				"fallback-result": "result", "fallback-cleanup-result": "outputs.cleanup-result",
			} {
				nm := needsResultRE.FindStringSubmatch(st.With[input])
				if nm == nil || nm[2] != want || !needsJob(job.Needs, nm[1]) {
					assert.Failf(t, "consumer workflow", "job %s: %s must be exactly ${{ needs.<job>.%s }} of a needed job, got %q", name, input, want, st.With[input])
				}
			}
		}
	}
	if gates != 1 {
		assert.Failf(t, "consumer workflow", "want exactly one aggregate job calling require-unity-validation, got %d", gates)
	}
}

// checkConcurrency: a concurrency scope, when present, is a mapping with a
// literal cancel-in-progress: false.
func checkConcurrency(t *testing.T, where string, n *yaml.Node) {
	t.Helper()
	if n.Kind == 0 {
		return
	}
	if n.Kind != yaml.MappingNode {
		assert.Failf(t, "consumer workflow", "%s: concurrency must be a mapping with cancel-in-progress: false", where)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "cancel-in-progress" {
			v := n.Content[i+1]
			if v.Tag != "!!bool" || v.Value != "false" {
				assert.Failf(t, "consumer workflow", "%s: cancel-in-progress must be the literal false, got %q", where, v.Value)
			}
			return
		}
	}
	assert.Failf(t, "consumer workflow", "%s: concurrency without a literal cancel-in-progress: false", where)
}

// checkJobPermissions: every job declares its permissions, none of them
// write.
func checkJobPermissions(t *testing.T, job string, n *yaml.Node) {
	t.Helper()
	if n.Kind != yaml.MappingNode {
		assert.Failf(t, "consumer workflow", "job %s: declare permissions as a mapping (least privilege)", job)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if v := n.Content[i+1].Value; v != "read" && v != "none" {
			assert.Failf(t, "consumer workflow", "job %s: permission %s: %s; consumer jobs need read access only", job, n.Content[i].Value, v)
		}
	}
}

// checkWith: every with: key is a declared input and every required input
// is given.
func checkWith(t *testing.T, where, action string, meta actioncontract.Metadata, with map[string]string) {
	t.Helper()
	for k := range with {
		if _, ok := meta.Inputs[k]; !ok {
			assert.Failf(t, "consumer workflow", "%s: %s has no input %q", where, action, k)
		}
	}
	for name, in := range meta.Inputs {
		if in.Required != nil && *in.Required && strings.TrimSpace(with[name]) == "" {
			assert.Failf(t, "consumer workflow", "%s: required input %s of %s is missing", where, name, action)
		}
	}
}
