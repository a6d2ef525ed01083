package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// edit is one text replacement of the corpus consumer workflow; old must
// occur exactly once (every occurrence, at least one, when all is set).
type edit struct {
	old, new string
	all      bool
}

func once(old, new string) edit  { return edit{old: old, new: new} }
func every(old, new string) edit { return edit{old: old, new: new, all: true} }

func mutated(t *testing.T, base string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		if e.all {
			require.Contains(t, base, e.old)
			base = strings.ReplaceAll(base, e.old, e.new)
			continue
		}
		require.Equal(t, 1, strings.Count(base, e.old), "edit text must occur exactly once:\n%s", e.old)
		base = strings.Replace(base, e.old, e.new, 1)
	}
	return base
}

// parityCase is a mutation of the consumer workflow and the codes the
// analyzer must report for it (none: it must stay clean).
type parityCase struct {
	name  string
	edits []edit
	want  []policy.Code
}

func runParity(t *testing.T, cases []parityCase) {
	t.Helper()
	base := consumerWorkflow(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := policy.Analyze(snapshotOf(map[string]string{wfPath: mutated(t, base, tc.edits...)}), basePolicy())
			want := tc.want
			if want == nil {
				want = []policy.Code{}
			}
			got := res.Codes()
			if got == nil {
				got = []policy.Code{}
			}
			assert.Equal(t, want, got, "findings: %+v", res.Findings)
		})
	}
}

// TestCleanupGateOptionalInputs: reservation-state, reservation-id and
// incident-id are optional inputs of require-confirmed-unity-cleanup (the
// reference requires only the other ten); when given they must be bound
// to release's outputs of the same name.
func TestCleanupGateOptionalInputs(t *testing.T) {
	t.Parallel()
	const (
		state    = "          reservation-state: ${{ steps.release.outputs.reservation-state }}\n"
		id       = "          reservation-id: ${{ steps.release.outputs.reservation-id }}\n"
		incident = "          incident-id: ${{ steps.release.outputs.incident-id }}\n"
	)
	runParity(t, []parityCase{
		{"all three omitted", []edit{once(state+id+incident, "")}, nil},
		{"incident-id omitted", []edit{once(incident, "")}, nil},
		{"reservation-id omitted", []edit{once(id, "")}, nil},
		{"reservation-state bound elsewhere", []edit{once(state, "          reservation-state: ${{ steps.release.outputs.released }}\n")},
			[]policy.Code{policy.CleanupGateInputsNotTyped}},
		{"incident-id a literal", []edit{once(incident, "          incident-id: none\n")}, []policy.Code{policy.CleanupGateInputsNotTyped}},
		{"a required input omitted", []edit{once("          released: ${{ steps.release.outputs.released }}\n", "")},
			[]policy.Code{policy.CleanupGateInputsNotTyped}},
		{"an unknown input", []edit{once(incident, incident+"          extra: x\n")}, []policy.Code{policy.CleanupGateInputsNotTyped}},
	})
}

// TestHolderIDSuffixPerLeg: every leg of a licensed matrix acquires under
// its own holder id (the reference requires the suffix to name every
// axis of a static matrix and renders every leg's suffix, compared
// without case).
func TestHolderIDSuffixPerLeg(t *testing.T) {
	t.Parallel()
	const (
		suffix  = "${{ matrix.unity-version }}-${{ matrix.test-mode }}"
		matrix  = "        unity-version: [\"6000.0.40f1\"]\n        test-mode: [editmode, playmode, standalone]\n"
		profile = "${{ matrix.test-mode == 'standalone' && 'StandaloneWindowsIl2Cpp' || 'EditorOnly' }}"
	)
	collision := []policy.Code{policy.HolderIDSuffixCollision}
	runParity(t, []parityCase{
		{"every axis, distinct legs", nil, nil},
		{"an include that merges into a leg", []edit{every(matrix, matrix+"        include:\n          - test-mode: editmode\n            shard: one\n")}, nil},
		{"an include leg differing only in case", []edit{every(matrix, matrix+"        include:\n          - unity-version: \"6000.0.40F1\"\n            test-mode: editmode\n")}, collision},
		{"3.10 and 3.1 are one number", []edit{every("unity-version: [\"6000.0.40f1\"]", "unity-version: [3.1, 3.10]")}, collision},
		{"the default suffix on a matrix", []edit{every("          holder-id-suffix: "+suffix+"\n", ""), once(":licensed:"+suffix, ":licensed:default")}, collision},
		{"a suffix without matrix values", []edit{every(suffix, "unity")}, collision},
		{"a dynamic matrix", []edit{every(matrix, "        include: ${{ fromJSON(vars.UNITY_MATRIX) }}\n"), once(profile, "EditorOnly")}, collision},
		{"a suffix the audit cannot evaluate", []edit{every(suffix, "${{ format('{0}-{1}', matrix.unity-version, matrix.test-mode) }}")}, collision},
		{"an object axis named by its properties", []edit{every("unity-version: [\"6000.0.40f1\"]", "unity-version: [{v: \"6000.0.40f1\"}, {v: \"6000.1.1f1\"}]"), every(suffix, "${{ matrix.unity-version.v }}-${{ matrix.test-mode }}"), every("unity-version: ${{ matrix.unity-version }}", "unity-version: ${{ matrix.unity-version.v }}")}, nil},
	})
}

// TestUnityStartedBeforeAcquire: starting the editor before acquire by any
// means is acquire-after-activation (the reference flags every invocation
// of the editor, not only the licensing flags); after acquire, in a
// guarded step, it is the licensed work itself.
func TestUnityStartedBeforeAcquire(t *testing.T) {
	t.Parallel()
	const anchor = "      - name: Acquire organization Unity lock\n"
	before := func(step string) []edit { return []edit{once(anchor, step+"\n"+anchor)} }
	early := []policy.Code{policy.AcquireAfterActivation}
	runParity(t, []parityCase{
		{"Unity.exe by path", before("      - run: '& \"C:\\Program Files\\Unity\\Hub\\Editor\\6000.0.40f1\\Editor\\Unity.exe\" -quit -logFile -'\n        shell: pwsh\n"), early},
		{"Unity by name", before("      - run: unity -quit\n        shell: bash\n"), early},
		{"Start-Process", before("      - run: Start-Process -FilePath $env:UNITY_EDITOR_PATH -Wait\n        shell: pwsh\n"), early},
		{"a script given the editor path", before("      - run: ./ci/warm-cache.ps1 -Editor $env:EDITOR\n        shell: pwsh\n        env:\n          EDITOR: ${{ steps.ensure-unity-editor.outputs.editor-path }}\n"), early},
		{"a script given Unity's command line", before("      - run: ./ci/import.sh -batchmode -projectPath .\n"), early},
		{"the macOS bundle", before("      - run: /Applications/Unity/Hub/Editor/6000.0.40f1/Unity.app/Contents/MacOS/Unity -quit\n"), early},
		{"a script that does not start Unity", before("      - run: ./ci/restore-cache.sh\n"), nil},
		{"only returning a license", before("      - run: Unity.exe -quit -batchmode -nographics -returnlicense\n"), nil},
	})
}

// TestClassifierAndPreflightTampering: the reference refuses a classifier
// or preflight job that can report what it did not check; so does this
// audit, with the broken part as the detail.
func TestClassifierAndPreflightTampering(t *testing.T) {
	t.Parallel()
	const (
		clsJob  = "    name: Classify Unity changes\n    runs-on: ubuntu-latest\n"
		clsStep = "        id: classify\n"
		preJob  = "    name: Unity runner preflight\n    runs-on: ubuntu-latest\n"
		preStep = "      - name: Check Unity runner availability\n"
		paths   = "          head-sha: ${{ github.event.pull_request.head.sha }}\n\n  licensed:"
		trust   = "github.event.pull_request.head.repo.full_name == github.repository"
	)
	cls := []policy.Code{policy.UnsafeUnityChangeClassifier}
	pre := []policy.Code{policy.UnsafeRunnerPreflight}
	withPaths := func(v string) []edit {
		return []edit{once(paths, "          head-sha: ${{ github.event.pull_request.head.sha }}\n          independent-paths: "+v+"\n\n  licensed:")}
	}
	runParity(t, []parityCase{
		{"a literal declared allowlist", withPaths("|\n            docs/**\n            tools/site/**"), nil},
		{"classifier: a literal unity-required", []edit{once("unity-required: ${{ steps.classify.outputs.unity-required }}", "unity-required: 'false'")}, cls},
		{"classifier: continue-on-error on the job", []edit{once(clsJob, clsJob+"    continue-on-error: true\n")}, cls},
		{"classifier: continue-on-error on the step", []edit{once(clsStep, clsStep+"        continue-on-error: ${{ true }}\n")}, cls},
		{"classifier: continue-on-error false is fine", []edit{once(clsStep, clsStep+"        continue-on-error: false\n")}, nil},
		{"classifier: a container", []edit{once(clsJob, clsJob+"    container: node:20\n")}, cls},
		{"classifier: an actor check", []edit{once(clsJob, clsJob+"    if: github.actor != 'renovate[bot]'\n")}, cls},
		{"classifier: another event name", []edit{once("event-name: ${{ github.event_name }}", "event-name: push")}, cls},
		{"classifier: a step that rewrites history first", []edit{once("      - name: Classify changes\n", "      - run: git replace HEAD~1 HEAD\n      - name: Classify changes\n")}, cls},
		{"classifier: an allowlist from an output", withPaths("${{ needs.static.outputs.paths }}"), cls},
		{"classifier: an allowlist around Assets", withPaths("Assets/Docs/**"), cls},
		{"classifier: an allowlist containing the workflows", withPaths(".github/**"), cls},
		{"classifier: a parent-directory segment", withPaths("docs/../Assets/**"), cls},
		{"preflight: continue-on-error on the step", []edit{once(preStep, preStep+"        continue-on-error: true\n")}, pre},
		{"preflight: a container", []edit{once(preJob, preJob+"    services:\n      cache:\n        image: redis@sha256:"+strings.Repeat("a", 64)+"\n")}, pre},
		{"preflight: an actor check on the job", []edit{once(preJob, preJob+"    if: github.actor != 'dependabot[bot]'\n")}, pre},
		{"preflight: a conditional step", []edit{once(preStep, preStep+"        if: github.event_name == 'push'\n")}, pre},
		{"trust: decided by the actor", []edit{every(trust, "github.actor != 'dependabot[bot]' && "+trust)}, []policy.Code{policy.MissingUnityAggregate}},
		{"trust: a constant", []edit{
			once("(github.event_name != 'pull_request' || "+trust+") }}", "true }}"),
			once("trusted-revision: ${{ github.event_name != 'pull_request' || "+trust+" }}", "trusted-revision: ${{ true }}"),
		}, []policy.Code{policy.MissingUnityAggregate}},
	})
}

// TestGatekeeperDetails: each finding names the broken part.
func TestGatekeeperDetails(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	details := func(edits ...edit) []string {
		res := policy.Analyze(snapshotOf(map[string]string{wfPath: mutated(t, base, edits...)}), basePolicy())
		var out []string
		for _, f := range res.Findings {
			out = append(out, string(f.Code)+"/"+f.Detail)
		}
		return out
	}
	assert.Equal(t, []string{"unsafe-unity-change-classifier/output-not-bound"},
		details(once("unity-required: ${{ steps.classify.outputs.unity-required }}", "unity-required: false")))
	assert.ElementsMatch(t, []string{"unsafe-unity-change-classifier/actor-check", "unsafe-unity-change-classifier/condition"},
		details(once("    name: Classify Unity changes\n", "    name: Classify Unity changes\n    if: ${{ github.triggering_actor == 'octocat' }}\n")))
	assert.Equal(t, []string{"unsafe-runner-preflight/actor-check"},
		details(once("    name: Unity runner preflight\n", "    name: Unity runner preflight\n    if: github.actor != 'dependabot[bot]'\n")))
	assert.Equal(t, []string{"unsafe-unity-change-classifier/independent-paths"},
		details(once("          head-sha: ${{ github.event.pull_request.head.sha }}\n\n  licensed:",
			"          head-sha: ${{ github.event.pull_request.head.sha }}\n          independent-paths: ${{ github.head_ref }}/**\n\n  licensed:")))
}

// TestReturnStepTampering: the return step runs the pinned action as it
// is, with the reviewed inputs; continue-on-error on any of the four
// cleanup steps is refused (the reference requires failure to propagate).
func TestReturnStepTampering(t *testing.T) {
	t.Parallel()
	const (
		toolCache = "          tool-cache: ${{ runner.tool_cache }}\n"
		suffix    = "          evidence-suffix: ${{ matrix.test-mode }}\n"
	)
	typed := []policy.Code{policy.UnityReturnInputsNotTyped}
	runParity(t, []parityCase{
		{"continue-on-error", []edit{once("        id: return-unity-license\n", "        id: return-unity-license\n        continue-on-error: ${{ true }}\n")}, []policy.Code{policy.UnityReturnNotAlways}},
		{"continue-on-error false", []edit{once("        id: return-unity-license\n", "        id: return-unity-license\n        continue-on-error: false\n")}, nil},
		{"classifier continue-on-error", []edit{once("        id: classify-unity-cleanup\n", "        id: classify-unity-cleanup\n        continue-on-error: true\n")}, []policy.Code{policy.ClassifierNotAlways}},
		{"release continue-on-error", []edit{once("        id: release\n        if: always()\n", "        id: release\n        if: always()\n        continue-on-error: true\n")}, []policy.Code{policy.ReleaseNotAlways}},
		{"step env", []edit{once(suffix, suffix+"        env:\n          NODE_OPTIONS: --require ./x.js\n")}, []policy.Code{policy.UnsafeNodeOptions, policy.UnsafeReturnExecutionEnvironment}},
		{"tool-cache from an expression", []edit{once(toolCache, "          tool-cache: ${{ github.workspace }}\n")}, typed},
		{"tool-cache from an input the PR controls", []edit{once(toolCache, "          tool-cache: ${{ github.event.pull_request.title }}\n")}, typed},
		{"an editor-path input", []edit{once(toolCache, toolCache+"          editor-path: ${{ steps.ensure-unity-editor.outputs.editor-path }}\n")}, typed},
		{"a credential that is not a secret", []edit{once("unity-email: ${{ secrets.UNITY_EMAIL }}", "unity-email: ${{ vars.UNITY_EMAIL }}")}, typed},
		{"a literal layout", []edit{once(suffix, suffix+"          editor-layout: ci-managed-alternate\n")}, nil},
		{"a layout from an expression", []edit{once(suffix, suffix+"          editor-layout: ${{ vars.LAYOUT }}\n")}, typed},
		{"a literal version and suffix", []edit{
			once("          unity-version: ${{ matrix.unity-version }}\n          tool-cache", "          unity-version: 6000.0.40f1\n          tool-cache"),
			once("          unity-version: ${{ matrix.unity-version }}\n          install-root", "          unity-version: 6000.0.40f1\n          install-root"),
			once(suffix, "          evidence-suffix: tests-${{ matrix.test-mode }}\n"),
		}, nil},
		{"a suffix from the event", []edit{once(suffix, "          evidence-suffix: ${{ github.head_ref }}\n")}, typed},
	})
}

// TestWorkflowHygiene: what neither implementation caught, now caught in
// every consumer workflow, and the look-alikes that stay clean.
func TestWorkflowHygiene(t *testing.T) {
	t.Parallel()
	const lint = "        run: ./ci/static-checks.sh\n"
	runParity(t, []parityCase{
		{"a secret in a step env is the documented way", []edit{once(lint, lint+"        env:\n          TOKEN: ${{ secrets.NPM_TOKEN }}\n")}, nil},
		{"other expressions in run stay the lock repository's rule", []edit{once(lint, "        run: echo ${{ github.sha }}\n")}, nil},
		{"secrets in defaults.run.shell", []edit{once("    timeout-minutes: 10\n    permissions:\n      contents: read\n", "    timeout-minutes: 10\n    defaults:\n      run:\n        shell: bash -c \"${{ secrets.X }}\" {0}\n    permissions:\n      contents: read\n")}, []policy.Code{policy.SecretInShell}},
		{"write-all at the top", []edit{once("permissions: {}\n\nconcurrency", "permissions: write-all\n\nconcurrency")}, []policy.Code{policy.ExcessivePermissions}},
		{"a github-script token input is fine", []edit{once(lint, lint+"      - uses: actions/github-script@60a0d83039c74a4aee543508d2ffcb1c3799cdea\n        with:\n          github-token: ${{ secrets.BOT_TOKEN }}\n          script: console.log(context.sha)\n")}, nil},
	})
}

// TestPullRequestTargetCheckoutLookAlikes: checking out the base (the
// default), or a job that excludes pull_request_target, is not a pull
// request checkout.
func TestPullRequestTargetCheckoutLookAlikes(t *testing.T) {
	t.Parallel()
	const head = "on: [pull_request_target, pull_request]\npermissions: {}\njobs:\n  label:\n    runs-on: ubuntu-latest\n"
	const checkout = "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n        with:\n          persist-credentials: false\n"
	for name, tc := range map[string]struct {
		wf   string
		want []policy.Code
	}{
		"the base":             {head + "    steps:\n" + checkout, []policy.Code{}},
		"the base sha":         {head + "    steps:\n" + checkout + "          ref: ${{ github.event.pull_request.base.sha }}\n", []policy.Code{}},
		"a job excluding it":   {head + "    if: github.event_name != 'pull_request_target'\n    steps:\n" + checkout + "          ref: ${{ github.event.pull_request.head.sha }}\n", []policy.Code{}},
		"the head repository":  {head + "    steps:\n" + checkout + "          repository: ${{ github.event.pull_request.head.repo.full_name }}\n", []policy.Code{policy.PullRequestTargetCheckout}},
		"git log is not fetch": {head + "    steps:\n      - run: git log -1 \"$H\"\n        env:\n          H: ${{ github.event.pull_request.head.sha }}\n", []policy.Code{}},
	} {
		res := policy.Analyze(snapshotOf(map[string]string{wfPath: consumerWorkflow(t), ".github/workflows/label.yml": tc.wf}), basePolicy())
		got := res.Codes()
		if got == nil {
			got = []policy.Code{}
		}
		assert.Equal(t, tc.want, got, "%s: %+v", name, res.Findings)
	}
}
