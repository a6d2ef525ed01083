package policy

import "sort"

// Code is a stable finding code. Codes are the contract with operators,
// the drift issue and docs/enrollment.md: they are never renamed.
type Code string

// Rule 1: every remote uses: pinned; lock actions only from the lock
// repository at an approved pin.
const (
	// MutableActionRef: a remote action (or docker image) not pinned to a
	// 40-hex commit (or sha256 digest).
	MutableActionRef Code = "mutable-action-ref"
	// MutableReusableRef: a remote reusable workflow not pinned to a 40-hex
	// commit.
	MutableReusableRef Code = "mutable-reusable-ref"
	// UnapprovedLockRef: a lock action pinned to a commit the registry does
	// not approve (for return-unity-license: not in approvedReturnShas).
	UnapprovedLockRef Code = "unapproved-lock-ref"
	// ForeignActionReference: a lock action's name used from a repository
	// other than the lock repository.
	ForeignActionReference Code = "foreign-action-reference"
	// UnresolvedReusableWorkflow: a called workflow that could not be read
	// at its pinned commit (treated as licensed).
	UnresolvedReusableWorkflow Code = "unresolved-reusable-workflow"
	// MutableAcquireRef: acquire not pinned to a 40-hex commit.
	MutableAcquireRef Code = "mutable-acquire-ref"
	// UnapprovedAcquireRef: acquire pinned to an unapproved commit.
	UnapprovedAcquireRef Code = "unapproved-acquire-ref"
)

// Rule 2: licensed work only on trusted triggers.
const (
	// IneligibleUnityTrigger: a licensed workflow can be started by an event
	// that is not a same-repository pull request, a push to the protected
	// default branch, or a registry-allowed dispatch.
	IneligibleUnityTrigger Code = "ineligible-unity-trigger"
	// ApprovalEnvironment: an environment: on a paid or fallback job.
	ApprovalEnvironment Code = "approval-environment"
)

// Rule 3: the hosted runner preflight.
const (
	// MissingRunnerPreflight: no hosted check-unity-runner-availability job
	// that the licensed job needs.
	MissingRunnerPreflight Code = "missing-runner-preflight"
	// UnsafeRunnerPreflight: a preflight job of a licensed workflow that
	// can pass without checking (continue-on-error, a container, a
	// conditional or env-bearing preflight step, an actor check).
	UnsafeRunnerPreflight Code = "unsafe-runner-preflight"
)

// Rule 4: the editor gate before credentials and the lock.
const (
	// MissingUnityEditorCheck: no ensure-unity-editor step in the licensed
	// job.
	MissingUnityEditorCheck Code = "missing-unity-editor-check"
	// UnboundedUnityEditorCheck: the gate's timeout-minutes is missing or
	// not a literal integer 1..10.
	UnboundedUnityEditorCheck Code = "unbounded-unity-editor-check"
	// UnityEditorCheckAfterCredentials: a credential-bearing step runs
	// before the gate.
	UnityEditorCheckAfterCredentials Code = "unity-editor-check-after-credentials"
	// UnityEditorCheckAfterLock: acquire runs before the gate.
	UnityEditorCheckAfterLock Code = "unity-editor-check-after-lock"
	// UnsafeUnityEditorProvisioning: a consumer script provisions editors.
	UnsafeUnityEditorProvisioning Code = "unsafe-unity-editor-provisioning"
	// UnityEditorProvisioningControl: a provisioning knob (environment
	// variable) is set in the licensed job.
	UnityEditorProvisioningControl Code = "unity-editor-provisioning-control"
	// UnsafeUnityEditorCheck: the gate's position, inputs or environment
	// break the fixed shape.
	UnsafeUnityEditorCheck Code = "unsafe-unity-editor-check"
)

// Rule 5: the current-PR-head guard.
const (
	// MissingInitialCurrentHeadGuard: no require-current-pr-head step before
	// expensive setup (step 0, or step 1 after the editor gate).
	MissingInitialCurrentHeadGuard Code = "missing-initial-current-head-guard"
	// MissingPreLockCurrentHeadGuard: acquire gets none of the pull-request
	// identity inputs, so it cannot revalidate the head while queued.
	MissingPreLockCurrentHeadGuard Code = "missing-pre-lock-current-head-guard"
	// InvalidCurrentHeadGuard: the guard step's inputs or condition differ
	// from the fixed shape.
	InvalidCurrentHeadGuard Code = "invalid-current-head-guard"
	// InvalidAcquirePRHeadRevalidation: acquire's pull-request identity
	// inputs are incomplete or not the event's.
	InvalidAcquirePRHeadRevalidation Code = "invalid-acquire-pr-head-revalidation"
)

// Rule 6: exactly one acquire before activation; no job-scoped
// credentials, containers or NODE_OPTIONS.
const (
	// MissingLockAcquire: a paid job without an acquire step.
	MissingLockAcquire Code = "missing-lock-acquire"
	// AmbiguousLockAcquire: more than one acquire, or a runner-id that is
	// not ${{ runner.name }}.
	AmbiguousLockAcquire Code = "ambiguous-lock-acquire"
	// AcquireAfterActivation: an activation-capable step runs before
	// acquire.
	AcquireAfterActivation Code = "acquire-after-activation"
	// JobScopedUnityCredential: Unity credentials at workflow or job level,
	// or in a step that is not a licensed step.
	JobScopedUnityCredential Code = "job-scoped-unity-credential"
	// UnsafeJobContainer: a container or services on a paid or fallback job.
	UnsafeJobContainer Code = "unsafe-job-container"
	// UnsafeNodeOptions: NODE_OPTIONS set where the lock actions run.
	UnsafeNodeOptions Code = "unsafe-node-options"
	// HolderIDSuffixCollision: two legs of a licensed matrix can acquire
	// under one holder id (rendered holder-id-suffix values collide, the
	// suffix omits an axis, or the matrix cannot be enumerated).
	HolderIDSuffixCollision Code = "holder-id-suffix-collision"
)

// Rule 7: return, classify, release, gate: the job's last four steps.
const (
	// MissingUnityReturn: no return-unity-license step.
	MissingUnityReturn Code = "missing-unity-return"
	// UnityReturnNotAlways: the return is not guarded by exactly
	// always() && steps.<acquire>.outputs.acquired == 'true'.
	UnityReturnNotAlways Code = "unity-return-not-always"
	// MissingCleanupClassifier: no classify-unity-cleanup-evidence step.
	MissingCleanupClassifier Code = "missing-cleanup-classifier"
	// ClassifierNotAlways: the classifier is not guarded like the return.
	ClassifierNotAlways Code = "classifier-not-always"
	// ClassifierBeforeUnityReturn: the classifier runs before the return.
	ClassifierBeforeUnityReturn Code = "classifier-before-unity-return"
	// ClassifierInputsNotTyped: the classifier is not bound to the return's
	// outputs and digest.
	ClassifierInputsNotTyped Code = "classifier-inputs-not-typed"
	// MissingTypedRelease: no release step in the licensed job.
	MissingTypedRelease Code = "missing-typed-release"
	// ReleaseNotAlways: release is not guarded by exactly always().
	ReleaseNotAlways Code = "release-not-always"
	// ReleaseBeforeClassification: release runs before the classifier.
	ReleaseBeforeClassification Code = "release-before-classification"
	// ReleaseInputsNotTyped: release is not bound to the classifier's typed
	// outputs and acquire's identity.
	ReleaseInputsNotTyped Code = "release-inputs-not-typed"
	// MissingCleanupGate: no require-confirmed-unity-cleanup step.
	MissingCleanupGate Code = "missing-cleanup-gate"
	// CleanupGateNotAlways: the gate is not guarded by exactly always(), or
	// may continue on error.
	CleanupGateNotAlways Code = "cleanup-gate-not-always"
	// CleanupGateBeforeRelease: the gate runs before release.
	CleanupGateBeforeRelease Code = "cleanup-gate-before-release"
	// CleanupGateInputsNotTyped: the gate is not bound to acquire's,
	// the classifier's and release's outputs.
	CleanupGateInputsNotTyped Code = "cleanup-gate-inputs-not-typed"
	// UnsafeCentralReturnSuffix: the four cleanup steps are not the job's
	// last four consecutive steps, or a timeout cuts them short.
	UnsafeCentralReturnSuffix Code = "unsafe-central-return-suffix"
	// UnsafeReturnExecutionEnvironment: the return runs elsewhere than on a
	// self-hosted Windows runner chosen by literal labels, or with a step
	// env:, working-directory or shell that reaches its process.
	UnsafeReturnExecutionEnvironment Code = "unsafe-return-execution-environment"
	// UnityReturnInputsNotTyped: the return step's inputs are not the
	// reviewed ones (an unknown input such as editor-path, a tool-cache or
	// credential from another expression).
	UnityReturnInputsNotTyped Code = "unity-return-inputs-not-typed"
)

// Rule 8: the hosted fallback cleanup for runner loss.
const (
	// InvalidFallbackRelease: a licensed job has no fallback job, or the
	// fallback's release is not the exact holder identity with
	// unknown/healthy/return-terminated, or its cleanup-result output is
	// missing.
	InvalidFallbackRelease Code = "invalid-fallback-release"
	// InvalidFallbackTimeout: a fallback timeout below the 5-minute floor
	// or not a literal integer.
	InvalidFallbackTimeout Code = "invalid-fallback-timeout"
	// FallbackCleanupNotAlways: the fallback job's if lacks a top-level
	// always().
	FallbackCleanupNotAlways Code = "fallback-cleanup-not-always"
	// FallbackCleanupNotHosted: the fallback job does not run on exactly
	// ubuntu-latest.
	FallbackCleanupNotHosted Code = "fallback-cleanup-not-hosted"
	// UnexpectedFallbackStep: a fallback step other than its one release.
	UnexpectedFallbackStep Code = "unexpected-fallback-step"
	// MissingFallbackAggregate: no aggregate binds the fallback's result and
	// cleanup-result.
	MissingFallbackAggregate Code = "missing-fallback-aggregate"
)

// Rule 9: the always-reporting aggregate.
const (
	// MissingUnityAggregate: no always-reporting require-unity-validation
	// job bound to the exact needs results, classifier output and trust
	// expression.
	MissingUnityAggregate Code = "missing-unity-aggregate"
	// UnsafeUnityChangeClassifier: the classify-unity-changes job of a
	// licensed workflow can report a skip it did not decide (a literal
	// output, continue-on-error, a container, an allowlist the pull request
	// controls, inputs other than the event's, extra steps, a condition).
	UnsafeUnityChangeClassifier Code = "unsafe-unity-change-classifier"
)

// Rule 10: no automatic cancellation on any scope that reaches acquire.
const (
	// UnsafeWorkflowCancellation: a workflow-level (or called workflow's)
	// concurrency without a literal cancel-in-progress: false.
	UnsafeWorkflowCancellation Code = "unsafe-workflow-cancellation"
	// UnsafeJobCancellation: a job-level concurrency without a literal
	// cancel-in-progress: false.
	UnsafeJobCancellation Code = "unsafe-job-cancellation"
	// UnsafeMatrixFailFast: a licensed matrix without a literal fail-fast:
	// false.
	UnsafeMatrixFailFast Code = "unsafe-matrix-fail-fast"
)

// Rule 11: nothing Unity-shaped passes silently.
const (
	// UnreviewedUnityReference: a Unity-shaped job or action that is none
	// of the modeled shapes and has no exception.
	UnreviewedUnityReference Code = "unreviewed-unity-reference"
	// MissingLicensedSteps: acquire without any step guarded on its
	// acquired output.
	MissingLicensedSteps Code = "missing-licensed-steps"
	// ExpiredPolicyException: a registry exception for this repository has
	// expired.
	ExpiredPolicyException Code = "expired-policy-exception"
	// StalePolicyException: a registry exception names a file that does not
	// exist or holds nothing it could apply to.
	StalePolicyException Code = "stale-policy-exception"
)

// Audit-level codes.
const (
	// RepositoryRetrievalIncomplete: the repository could not be read
	// completely at the exact commit (missing, truncated, too large,
	// moved, not accessible).
	RepositoryRetrievalIncomplete Code = "repository-retrieval-incomplete"
	// RepositoryAnalysisIncomplete: a workflow or action could not be
	// parsed or a local reference could not be followed.
	RepositoryAnalysisIncomplete Code = "repository-analysis-incomplete"
)

// Lock repository audits (AuditLockRepository).
const (
	// CredentialLiteral: a credential-shaped env name with a value that is
	// not ${{ secrets.NAME }} or ${{ github.token }}, or a credential-shaped
	// value under any name.
	CredentialLiteral Code = "credential-literal"
	// UnsupportedEnvMapping: an env: that is not a plain mapping of scalars
	// (an expression, merge keys, aliases, nested values).
	UnsupportedEnvMapping Code = "unsupported-env-mapping"
	// UnityCredentialOutsideRegisteredPath: a Unity credential name or a
	// game-ci Unity action outside the registered paths.
	UnityCredentialOutsideRegisteredPath Code = "unity-credential-outside-registered-path"
	// SecretInRun: ${{ secrets.* }} or ${{ github.token }} inside run:.
	SecretInRun Code = "secret-in-run"
	// ExpressionInRun: any other ${{ }} inside run: (script injection).
	ExpressionInRun Code = "expression-in-run"
	// CredentialedURL: an https URL with userinfo.
	CredentialedURL Code = "credentialed-url"
	// UnpinnedUses: a remote uses: not pinned to a 40-hex commit.
	UnpinnedUses Code = "unpinned-uses"
	// CheckoutPersistsCredentials: actions/checkout without
	// persist-credentials: false.
	CheckoutPersistsCredentials Code = "checkout-persists-credentials"
	// PullRequestTargetCheckout: a pull_request_target workflow checks out
	// the pull request's code.
	PullRequestTargetCheckout Code = "pull-request-target-checkout"
	// ExcessivePermissions: a workflow without a top-level permissions:
	// block, or write-all anywhere.
	ExcessivePermissions Code = "excessive-permissions"
	// MissingJobTimeout: a job without timeout-minutes (the 6-hour default
	// holds a runner and any seat it took).
	MissingJobTimeout Code = "missing-job-timeout"
	// SymlinkedFile: a symbolic link under .github: the runner follows it,
	// the audit does not, so what runs is not what was audited.
	SymlinkedFile Code = "symlinked-file"
	// OversizedFile: a workflow or action file over 1 MiB, which the audit
	// does not read.
	OversizedFile Code = "oversized-file"
)

// Credential and pull-request hygiene: reported by the consumer analyzer
// for every workflow (and the local composite actions it uses) and by the
// lock repository's audit. SecretInRun, ExcessivePermissions (write-all;
// the lock repository also needs a top-level block) and
// PullRequestTargetCheckout above are shared the same way.
const (
	// SecretInShell: ${{ secrets.* }} or ${{ github.token }} in a step's
	// shell: (or defaults.run.shell): the secret becomes part of the
	// command line.
	SecretInShell Code = "secret-in-shell"
	// SecretInScript: ${{ secrets.* }} or ${{ github.token }} inside an
	// actions/github-script script: the secret becomes program text.
	SecretInScript Code = "secret-in-github-script"
	// ExpressionInUses: a uses: (step or reusable-workflow call) written
	// with ${{ }}: what runs is decided at run time and is never a reviewed
	// pin.
	ExpressionInUses Code = "expression-in-uses"
)

// hints are the one-line fixes printed with each finding.
var hints = map[Code]string{
	MutableActionRef:           "pin the action to the full 40-character commit SHA you reviewed (a docker image to @sha256:<digest>)",
	MutableReusableRef:         "pin the reusable workflow to the full 40-character commit SHA you reviewed",
	UnapprovedLockRef:          "pin the lock action to a commit listed in the registry's approvedLockShas (return-unity-license: approvedReturnShas)",
	ForeignActionReference:     "use the lock actions only from the lock repository, not from a copy or fork",
	UnresolvedReusableWorkflow: "call only reusable workflows the audit can read at a pinned commit (this repository or an enrolled one)",
	MutableAcquireRef:          "pin acquire-build-lock to the full 40-character commit SHA you reviewed",
	UnapprovedAcquireRef:       "pin acquire-build-lock to a commit listed in the registry's approvedLockShas",

	IneligibleUnityTrigger: "trigger licensed workflows only on pull_request, push to the default branch, or (if the registry allows) workflow_dispatch",
	ApprovalEnvironment:    "remove environment: from the licensed and fallback jobs; a waiting approval holds a seat",

	MissingRunnerPreflight: "add a hosted job running check-unity-runner-availability and list it in the licensed job's needs",
	UnsafeRunnerPreflight:  "let the preflight fail its job: no continue-on-error, container, step env or condition on the preflight step, no github.actor check",

	MissingUnityEditorCheck:          "add the pinned ensure-unity-editor step as the first step (after the current-head guard)",
	UnboundedUnityEditorCheck:        "set timeout-minutes on the ensure-unity-editor step to a literal integer from 1 to 10",
	UnityEditorCheckAfterCredentials: "move ensure-unity-editor before every step that receives Unity credentials",
	UnityEditorCheckAfterLock:        "move ensure-unity-editor before acquire-build-lock",
	UnsafeUnityEditorProvisioning:    "remove editor installation from the workflow; editors are provisioned on the runner by its owners",
	UnityEditorProvisioningControl:   "remove the editor provisioning variables from the licensed job",
	UnsafeUnityEditorCheck:           "use the documented ensure-unity-editor step exactly: step 0 (or 1 after the guard), the fixed inputs, no workflow or job env",

	MissingInitialCurrentHeadGuard:   "make require-current-pr-head the first step of the licensed job (or the second, after ensure-unity-editor)",
	MissingPreLockCurrentHeadGuard:   "pass github-token, pull-request-number and expected-head-sha to acquire-build-lock",
	InvalidCurrentHeadGuard:          "call require-current-pr-head with github.token, the event's pull request number and head sha, without if or continue-on-error",
	InvalidAcquirePRHeadRevalidation: "pass acquire exactly ${{ github.token }}, ${{ github.event.pull_request.number }} and ${{ github.event.pull_request.head.sha }}",

	MissingLockAcquire:       "acquire the organization lock (acquire-build-lock) before any step that receives Unity credentials",
	AmbiguousLockAcquire:     "use exactly one acquire-build-lock step per job with runner-id: ${{ runner.name }}",
	AcquireAfterActivation:   "move every step that can activate Unity after acquire-build-lock",
	JobScopedUnityCredential: "pass Unity credentials only in the env of licensed steps guarded on the acquire output",
	UnsafeJobContainer:       "run the licensed and fallback jobs directly on the runner, without container or services",
	UnsafeNodeOptions:        "remove NODE_OPTIONS from the licensed job",
	HolderIDSuffixCollision:  "make holder-id-suffix name every matrix axis (${{ matrix.<axis> }}) so each leg acquires under its own holder id, over a literal matrix",

	MissingUnityReturn:               "add the pinned return-unity-license step after the licensed steps",
	UnityReturnNotAlways:             "guard return-unity-license with if: always() && steps.<acquire>.outputs.acquired == 'true'",
	MissingCleanupClassifier:         "add classify-unity-cleanup-evidence right after the return step",
	ClassifierNotAlways:              "guard classify-unity-cleanup-evidence with if: always() && steps.<acquire>.outputs.acquired == 'true'",
	ClassifierBeforeUnityReturn:      "move classify-unity-cleanup-evidence after return-unity-license",
	ClassifierInputsNotTyped:         "bind the classifier's five inputs to the return step's outputs of the same names",
	MissingTypedRelease:              "add release-build-lock after the classifier, bound to the classifier's outputs",
	ReleaseNotAlways:                 "guard release-build-lock with if: always()",
	ReleaseBeforeClassification:      "move release-build-lock after classify-unity-cleanup-evidence",
	ReleaseInputsNotTyped:            "pass release the classifier's resource-cleanup-status, resource-health and resource-reason and acquire's lock-name, holder-id-suffix and runner-id",
	MissingCleanupGate:               "add require-confirmed-unity-cleanup as the job's last step",
	CleanupGateNotAlways:             "guard require-confirmed-unity-cleanup with if: always() and no continue-on-error",
	CleanupGateBeforeRelease:         "move require-confirmed-unity-cleanup after release-build-lock",
	CleanupGateInputsNotTyped:        "bind every require-confirmed-unity-cleanup input to the acquire, classifier and release outputs",
	UnsafeCentralReturnSuffix:        "make return, classify, release and the cleanup gate the job's last four steps, with no timeout below the floors",
	UnsafeReturnExecutionEnvironment: "run the job that returns the license on a self-hosted Windows runner selected by literal labels, without env, shell or working-directory on the return step",
	UnityReturnInputsNotTyped:        "pass return-unity-license only unity-version, tool-cache: ${{ runner.tool_cache }}, the two Unity secrets, evidence-suffix and editor-layout",

	InvalidFallbackRelease:   "add one hosted fallback job that releases ${{ github.repository }}:${{ github.run_id }}:<job>:<suffix> as unknown/healthy/return-terminated and outputs cleanup-result",
	InvalidFallbackTimeout:   "set the fallback job's and its release's timeout-minutes to a literal integer of at least 5, or omit them",
	FallbackCleanupNotAlways: "start the fallback job's if with always()",
	FallbackCleanupNotHosted: "run the fallback job on runs-on: ubuntu-latest",
	UnexpectedFallbackStep:   "leave the release as the fallback job's only step",
	MissingFallbackAggregate: "bind the aggregate's fallback-result and fallback-cleanup-result to the fallback job",

	MissingUnityAggregate:       "add an always() job running require-unity-validation bound to the needs results, the classifier output and the trust expression",
	UnsafeUnityChangeClassifier: "run classify-unity-changes in a hosted job of checkout and the classifier only, bound to the event, with a literal independent-paths list and its unity-required output",

	UnsafeWorkflowCancellation: "set cancel-in-progress: false (the YAML boolean) on every concurrency that can reach acquire",
	UnsafeJobCancellation:      "set cancel-in-progress: false (the YAML boolean) on the job's concurrency",
	UnsafeMatrixFailFast:       "set strategy.fail-fast: false (the YAML boolean) on licensed matrices",

	UnreviewedUnityReference: "model the Unity work with the documented pattern, or ask for a synthetic/disabled exception in the registry",
	MissingLicensedSteps:     "guard the licensed steps with if: steps.<acquire>.outputs.acquired == 'true'",
	ExpiredPolicyException:   "renew the registry exception with a new owner review, or fix the workflow and remove it",
	StalePolicyException:     "remove the registry exception: the file it names is gone or has nothing to except",

	RepositoryRetrievalIncomplete: "check that the reader App can read the repository and its default branch, then rerun the audit",
	RepositoryAnalysisIncomplete:  "fix the workflow or action so GitHub (and actionlint) can parse it, and every local uses: exists",

	CredentialLiteral:                    "pass credentials as ${{ secrets.NAME }} (or ${{ github.token }}); never commit a value",
	UnsupportedEnvMapping:                "write env: as a plain mapping of names to scalar values",
	UnityCredentialOutsideRegisteredPath: "keep Unity credentials and game-ci Unity actions in the registered paths",
	SecretInRun:                          "pass the secret through env: and read the variable in the script",
	ExpressionInRun:                      "pass the value through env: and read the variable in the script",
	CredentialedURL:                      "remove the credentials from the URL; authenticate through the checkout or a token in env",
	UnpinnedUses:                         "pin the action to the full 40-character commit SHA you reviewed",
	CheckoutPersistsCredentials:          "set persist-credentials: false on actions/checkout",
	PullRequestTargetCheckout:            "never check out pull request code in a pull_request_target workflow",
	ExcessivePermissions:                 "declare permissions: {} at the top and the least each job needs",
	MissingJobTimeout:                    "set timeout-minutes on every job",
	SymlinkedFile:                        "replace the symbolic link under .github with the file itself: the runner follows links, the audit reads files",
	OversizedFile:                        "keep workflow and action files under 1 MiB (split the file); the audit does not read larger ones",
	SecretInShell:                        "keep secrets out of shell:; pass them through env: and read the variable in the script",
	SecretInScript:                       "pass the secret through env: (process.env.NAME) or the github-token input, never inside script:",
	ExpressionInUses:                     "write uses: as a literal owner/repo[/path]@<40-hex commit>; an expression there is never a reviewed pin",
}

// Hint returns the one-line fix for code ("" for an unknown code).
func Hint(code Code) string { return hints[code] }

// ConsumerCodes returns every code the consumer analyzer can report,
// sorted.
func ConsumerCodes() []Code {
	var out []Code
	for c := range hints {
		if !selfAuditCodes[c] || sharedCodes[c] {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// LockRepositoryCodes returns every code AuditLockRepository can report,
// sorted.
func LockRepositoryCodes() []Code {
	out := []Code{UnsafeWorkflowCancellation, UnsafeJobCancellation, UnsafeMatrixFailFast, RepositoryAnalysisIncomplete}
	for c := range selfAuditCodes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// selfAuditCodes are the lock repository audit's codes.
var selfAuditCodes = map[Code]bool{
	CredentialLiteral: true, UnsupportedEnvMapping: true, UnityCredentialOutsideRegisteredPath: true,
	SecretInRun: true, ExpressionInRun: true, CredentialedURL: true, UnpinnedUses: true,
	CheckoutPersistsCredentials: true, PullRequestTargetCheckout: true, ExcessivePermissions: true,
	MissingJobTimeout: true, SecretInShell: true, SecretInScript: true, ExpressionInUses: true,
	SymlinkedFile: true, OversizedFile: true,
}

// sharedCodes are the lock repository audit's codes the consumer analyzer
// reports too (rules_hygiene.go).
var sharedCodes = map[Code]bool{
	SecretInRun: true, ExcessivePermissions: true, PullRequestTargetCheckout: true,
	SecretInShell: true, SecretInScript: true, ExpressionInUses: true,
}
