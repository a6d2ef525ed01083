package actioncontract

// Registry is the contract between each action.yml and the binary it runs:
// action directory (under .github/actions) → the binary the launcher runs →
// the input names the binary reads and the output names it writes.
//
// It is the hook the cmd packages fill: when a binary's set of reads/writes
// changes, its entry here changes with it, and contract_test.go checks the
// action.yml files against this table (and, once the binaries exist, the
// binaries' recorded actionio.IO.InputsRead/OutputsWritten against it).
// Until then it is filled from the spec (shared/spec/reference-behavior.md
// §1.2-1.6) plus the project's additions (lock-repository default "",
// output fencing-token).
var Registry = map[string]Action{
	"acquire-build-lock": {
		Binary:  "acquire",
		Node:    false,
		Inputs:  []string{"lock-name", "holder-id-suffix", "runner-id", "github-token", "pull-request-number", "expected-head-sha", "lock-repository", "state-branch", "timeout-minutes", "lease-minutes", "poll-seconds", "require-resource-lifecycle", "minimum-release-cooldown-seconds", "seat-labels", "priority", "machine-slots", "job-check-run-id"},
		Outputs: []string{"acquired", "lock-name", "holder-id", "state-sha", "wait-ms", "attempts", "stale-recovered", "quarantine-recovered", "admission-result", "incident-id", "resource-health", "resource-reason", "fencing-token", "seat", "seat-labels", "seat-secret-suffix", "machine-slot", "machine-wait-seconds", "lock-wait-seconds"},
	},
	"acquire-build-lock-with-cleanup": {
		Binary:  "acquire",
		Node:    true,
		Inputs:  []string{"lock-name", "holder-id-suffix", "runner-id", "github-token", "pull-request-number", "expected-head-sha", "lock-repository", "state-branch", "timeout-minutes", "lease-minutes", "poll-seconds", "require-resource-lifecycle", "minimum-release-cooldown-seconds", "seat-labels", "priority", "machine-slots", "job-check-run-id"},
		Outputs: []string{"acquired", "lock-name", "holder-id", "state-sha", "wait-ms", "attempts", "stale-recovered", "quarantine-recovered", "admission-result", "incident-id", "resource-health", "resource-reason", "fencing-token", "seat", "seat-labels", "seat-secret-suffix", "machine-slot", "machine-wait-seconds", "lock-wait-seconds"},
	},
	"release-build-lock": {
		Binary:  "release",
		Node:    false,
		Inputs:  []string{"lock-name", "holder-id-suffix", "lock-repository", "state-branch", "holder-id", "runner-id", "resource-safe", "resource-cleanup-status", "resource-health", "resource-reason", "release-retry-deadline-seconds", "api-max-attempts", "api-retry-base-ms", "api-retry-max-ms"},
		Outputs: []string{"released", "queue-cleaned", "cleanup-result", "lock-name", "holder-id", "state-sha", "held-by", "held-by-run-url", "reservation-id", "reservation-state", "available-at", "incident-id", "resource-health", "resource-reason", "report-degraded", "report-validation-error"},
	},
	"require-current-pr-head": {
		Binary:  "require-current-pr-head",
		Node:    false,
		Inputs:  []string{"github-token", "pull-request-number", "expected-head-sha"},
		Outputs: []string{"is-current", "current-head-sha"},
	},
	"reap-stale-locks": {
		Binary:  "reap",
		Node:    false,
		Inputs:  []string{"lock-name", "lock-repository", "state-branch", "operation", "reservation-id", "resource-safe", "incident-id", "portal-cleanup-confirmed", "request-budget"},
		Outputs: []string{"reaped", "state-sha"},
	},
	"return-unity-license": {
		Binary:  "return-license",
		Inputs:  []string{"unity-version", "tool-cache", "unity-email", "unity-password", "evidence-suffix", "editor-layout"},
		Outputs: []string{"return-log-path", "return-command-completed", "return-exit-code", "evidence-capture-complete", "return-log-digest"},
	},
	"classify-unity-cleanup-evidence": {
		Binary:  "classify",
		Args:    []string{"cleanup-evidence"},
		Inputs:  []string{"return-log-path", "return-command-completed", "return-exit-code", "evidence-capture-complete", "return-log-digest", "supplemental-evidence-paths"},
		Outputs: []string{"resource-safe", "resource-cleanup-status", "resource-health", "resource-reason", "classification-complete", "evidence-digest"},
	},
	"require-confirmed-unity-cleanup": {
		Binary: "require-confirmed-unity-cleanup",
		Inputs: []string{"acquired", "classification-complete", "cleanup-status", "cleanup-health", "cleanup-reason", "release-outcome",
			"cleanup-result", "released", "release-health", "release-reason", "reservation-state", "reservation-id", "incident-id"},
		Outputs: []string{"cleanup-safe"},
	},
	"ensure-unity-editor": {
		Binary: "ensure-unity-editor",
		Inputs: []string{"unity-version", "install-root", "provisioning-profile", "diagnostics-path", "ci-managed-only", "require-healthy-existing",
			"with-windows-il2cpp", "required-editor-payload-relative-path"},
		Outputs: []string{"editor-path"},
	},
	"recover-build-lock": {
		Binary:  "recover",
		Node:    false,
		Inputs:  []string{"lock-name", "lock-repository", "state-branch", "operation", "reservation-id", "resource-safe", "incident-id", "portal-cleanup-confirmed", "request-budget"},
		Outputs: []string{"reaped", "state-sha"},
	},
	// The hosted half of the Unity lifecycle (reference-behavior.md §1.7,
	// §1.8, §1.12, §1.13; issue 11).
	"check-unity-runner-availability": {
		Binary:  "preflight",
		Inputs:  []string{"reader-app-id", "reader-app-private-key", "owner", "required-label-sets"},
		Outputs: []string{"registered-runner-count", "matched-runners", "online-runner-count", "busy-runner-count"},
	},
	"classify-unity-changes": {
		Binary:  "classify",
		Args:    []string{"changes"},
		Inputs:  []string{"event-name", "base-sha", "head-sha", "independent-paths"},
		Outputs: []string{"unity-required"},
	},
	"require-unity-validation": {
		Binary:  "require-unity-validation",
		Inputs:  []string{"static-validation-result", "classifier-result", "unity-required", "trusted-revision", "preflight-result", "unity-result", "fallback-result", "fallback-cleanup-result"},
		Outputs: []string{"validation-safe"},
	},
	"validate-unity-license": {
		Binary:  "validate-unity-license",
		Inputs:  []string{"activation-mode"},
		Outputs: []string{"serial-present", "email-present", "password-present"},
	},
}

// Action is one Registry entry.
type Action struct {
	// Binary is the cmd/<Binary> program the launcher runs for the action.
	Binary string
	// Node is true for the one node24 action (it needs post:); all others
	// are composite.
	Node bool
	// Inputs are the input names, exactly as declared in action.yml.
	Inputs []string
	// Outputs are the output names, exactly as declared in action.yml.
	Outputs []string
	// Args are extra arguments after the binary name on both run: lines
	// (for example a mode: launch.sh classify changes); usually none.
	Args []string
	// Env are constant environment entries both steps of a composite action
	// carry besides the inputs (rendered sorted); usually none.
	Env map[string]string
}
