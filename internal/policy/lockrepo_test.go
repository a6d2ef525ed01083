package policy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

// TestLockRepositoryAudits is the lock repository's own audit in make
// test: this repository's workflows and actions pass every check.
func TestLockRepositoryAudits(t *testing.T) {
	t.Parallel()
	files, gaps, err := snapshot.DotGitHub(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.Empty(t, gaps)
	require.Contains(t, files, ".github/workflows/ci.yml")
	require.Contains(t, files, ".github/actions/acquire-build-lock/action.yml")
	fs := policy.AuditLockRepository(files, policy.LockRepositoryOptions{LockRepository: lockRepo})
	for _, f := range fs {
		t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Code, f.Detail, f.Hint())
	}
}

const okLockWorkflow = `name: Reap
on:
  schedule:
    - cron: "*/5 * * * *"
  workflow_dispatch:
    inputs:
      env:
        description: an input named env is not an env mapping
        type: string
permissions: {}
concurrency:
  group: reaper
  cancel-in-progress: false
jobs:
  reap:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
        with:
          persist-credentials: false
      - uses: ./.github/actions/reap-stale-locks
        env:
          BUILD_LOCK_APP_PRIVATE_KEY: ${{ secrets.BUILD_LOCK_APP_PRIVATE_KEY }}
          GITHUB_TOKEN: ${{ github.token }}
          BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}
      - run: echo "$GITHUB_TOKEN"
`

func TestAuditLockRepositoryCodes(t *testing.T) {
	t.Parallel()
	const wf = ".github/workflows/reap.yml"
	repl := func(old, new string) map[string]string {
		require.Contains(t, okLockWorkflow, old)
		return map[string]string{wf: strings.Replace(okLockWorkflow, old, new, 1)}
	}
	// Merge keys and nested env values are also refused by actionlint, so
	// those workflows are additionally not analyzed.
	alsoBroken := map[string]bool{"env merge key": true, "env nested": true}
	tests := []struct {
		name  string
		files map[string]string
		want  policy.Code
	}{
		{"ok", map[string]string{wf: okLockWorkflow}, ""},
		{"cancel true", repl("cancel-in-progress: false", "cancel-in-progress: true"), policy.UnsafeWorkflowCancellation},
		{"cancel quoted", repl("cancel-in-progress: false", `cancel-in-progress: "false"`), policy.UnsafeWorkflowCancellation},
		{"job cancel", repl("    timeout-minutes: 10\n", "    timeout-minutes: 10\n    concurrency:\n      group: x\n      cancel-in-progress: ${{ true }}\n"), policy.UnsafeJobCancellation},
		{"token literal", repl("GITHUB_TOKEN: ${{ github.token }}", "GITHUB_TOKEN: not-a-reference"), policy.CredentialLiteral},
		{"token from output", repl("GITHUB_TOKEN: ${{ github.token }}", "GITHUB_TOKEN: ${{ steps.mint.outputs.token }}"), policy.CredentialLiteral},
		{"pat value under any name", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: ghp_abcdefghijklmnopqrstuvwxyz0123"), policy.CredentialLiteral},
		{"uuid value", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: 123e4567-e89b-42d3-a456-426614174000"), policy.CredentialLiteral},
		{"aws key", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: AKIAABCDEFGHIJKLMNOP"), policy.CredentialLiteral},
		{"jwt", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMifQ.sig"), policy.CredentialLiteral},
		{"pem", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: \"-----BEGIN RSA PRIVATE KEY-----\""), policy.CredentialLiteral},
		{"base64 run", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "BUILD_LOCK_NAME: QWxhZGRpbjpvcGVuIHNlc2FtZTEyMzQ1Njc4OTA="), policy.CredentialLiteral},
		{"env expression", repl("        env:\n          BUILD_LOCK_APP_PRIVATE_KEY", "        env: ${{ fromJSON(vars.ENV) }}\n        with:\n          BUILD_LOCK_APP_PRIVATE_KEY"), policy.UnsupportedEnvMapping},
		{"env merge key", repl("        env:\n", "        env:\n          <<: {A: b}\n"), policy.UnsupportedEnvMapping},
		{"env nested", repl("          BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}\n", "          BUILD_LOCK_NAME: [a, b]\n"), policy.UnsupportedEnvMapping},
		{"unity credential", repl("BUILD_LOCK_NAME: ${{ vars.BUILD_LOCK_NAME }}", "UNITY_SERIAL: ${{ secrets.UNITY_SERIAL }}"), policy.UnityCredentialOutsideRegisteredPath},
		{"game-ci", repl("      - run: echo \"$GITHUB_TOKEN\"\n", "      - uses: game-ci/unity-builder@0123456789abcdef0123456789abcdef01234567\n"), policy.UnityCredentialOutsideRegisteredPath},
		{"secret in run", repl(`run: echo "$GITHUB_TOKEN"`, `run: echo "${{ secrets.X }}"`), policy.SecretInRun},
		{"token in run", repl(`run: echo "$GITHUB_TOKEN"`, `run: 'gh api -H "Authorization: token ${{ github.token }}"'`), policy.SecretInRun},
		{"expression in run", repl(`run: echo "$GITHUB_TOKEN"`, `run: echo "${{ github.event.issue.title }}"`), policy.ExpressionInRun},
		{"credentialed url", repl(`run: echo "$GITHUB_TOKEN"`, `run: git push https://x-access-token:$GITHUB_TOKEN@github.com/o/r.git`), policy.CredentialedURL},
		{"unpinned", repl("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", "actions/checkout@v4"), policy.UnpinnedUses},
		{"persisted credentials", repl("          persist-credentials: false\n", "          fetch-depth: 0\n"), policy.CheckoutPersistsCredentials},
		{"pull_request_target checkout", repl("          persist-credentials: false\n", "          persist-credentials: false\n          ref: ${{ github.event.pull_request.head.sha }}\n"), ""},
		{"no permissions", repl("permissions: {}\nconcurrency", "concurrency"), policy.ExcessivePermissions},
		{"write-all", repl("    permissions:\n      contents: read\n", "    permissions: write-all\n"), policy.ExcessivePermissions},
		{"no timeout", repl("    timeout-minutes: 10\n", ""), policy.MissingJobTimeout},
		{"broken", map[string]string{wf: "on: [push\n"}, policy.RepositoryAnalysisIncomplete},
		{"unity path registered", map[string]string{".github/actions/return-unity-license/action.yml": "name: r\ndescription: r\nruns:\n  using: composite\n  steps:\n    - run: x\n      shell: bash\n      env:\n        UNITY_EMAIL: ${{ inputs.unity-email }}\n"}, ""},
		{"composite run expression", map[string]string{".github/actions/x/action.yml": "name: r\ndescription: r\nruns:\n  using: composite\n  steps:\n    - run: echo ${{ inputs.a }}\n      shell: bash\n"}, policy.ExpressionInRun},
		{"composite unpinned", map[string]string{".github/actions/x/action.yml": "name: r\ndescription: r\nruns:\n  using: composite\n  steps:\n    - uses: actions/cache@v4\n"}, policy.UnpinnedUses},
		{"secret in shell", repl(`      - run: echo "$GITHUB_TOKEN"`, "      - run: echo \"$GITHUB_TOKEN\"\n        shell: bash --rcfile <(echo ${{ secrets.X }}) {0}"), policy.SecretInShell},
		{"secret in github-script", repl(`      - run: echo "$GITHUB_TOKEN"`, "      - uses: actions/github-script@60a0d83039c74a4aee543508d2ffcb1c3799cdea\n        with:\n          script: console.log('${{ github.token }}')"), policy.SecretInScript},
		{"expression in uses", repl("uses: ./.github/actions/reap-stale-locks", "uses: ${{ vars.REAPER }}"), policy.ExpressionInUses},
		{"composite secret in shell", map[string]string{".github/actions/x/action.yml": "name: r\ndescription: r\nruns:\n  using: composite\n  steps:\n    - run: x\n      shell: bash -c \"${{ github.token }}\" {0}\n"}, policy.SecretInShell},
		{"composite token input", map[string]string{".github/actions/x/action.yml": "name: r\ndescription: r\nruns:\n  using: composite\n  steps:\n    - run: x\n      shell: bash\n      env:\n        INPUT_GITHUB_TOKEN: ${{ inputs.github-token }}\n"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string][]byte{}
			for k, v := range tc.files {
				files[k] = []byte(v)
			}
			got := policy.AuditLockRepository(files, policy.LockRepositoryOptions{LockRepository: lockRepo})
			var codes []policy.Code
			for _, f := range got {
				codes = append(codes, f.Code)
				assert.NotContains(t, f.Detail, "ghp_", "a finding never carries a value")
			}
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			want := []policy.Code{tc.want}
			if alsoBroken[tc.name] {
				want = append(want, policy.RepositoryAnalysisIncomplete)
			}
			assert.ElementsMatch(t, want, codes, "%+v", got)
		})
	}
}

func TestAuditLockRepositoryPullRequestTarget(t *testing.T) {
	t.Parallel()
	wf := strings.Replace(strings.Replace(okLockWorkflow, "  workflow_dispatch:\n", "  pull_request_target:\n  workflow_dispatch:\n", 1),
		"          persist-credentials: false\n", "          persist-credentials: false\n          ref: ${{ github.event.pull_request.head.sha }}\n", 1)
	got := policy.AuditLockRepository(map[string][]byte{".github/workflows/x.yml": []byte(wf)}, policy.LockRepositoryOptions{LockRepository: lockRepo})
	require.Len(t, got, 1)
	assert.Equal(t, policy.PullRequestTargetCheckout, got[0].Code)
}

// TestAuditLockRepositoryPullRequestTargetIndirection: the head ref
// reaching a checkout or git through env:, gh pr checkout and pull/N/head
// fetches are pull request checkouts too.
func TestAuditLockRepositoryPullRequestTargetIndirection(t *testing.T) {
	t.Parallel()
	base := strings.Replace(okLockWorkflow, "  workflow_dispatch:\n", "  pull_request_target:\n  workflow_dispatch:\n", 1)
	for name, step := range map[string]string{
		"env indirection": "          persist-credentials: false\n          ref: ${{ env.R }}\n        env:\n          R: ${{ github.head_ref }}\n",
		"gh pr checkout":  "          persist-credentials: false\n      - run: gh pr checkout \"$N\"\n        env:\n          N: ${{ github.event.number }}\n",
		"git fetch":       "          persist-credentials: false\n      - run: git fetch origin refs/pull/$N/merge\n        env:\n          N: ${{ github.event.number }}\n",
	} {
		wf := strings.Replace(base, "          persist-credentials: false\n", step, 1)
		got := policy.AuditLockRepository(map[string][]byte{".github/workflows/x.yml": []byte(wf)}, policy.LockRepositoryOptions{LockRepository: lockRepo})
		require.Len(t, got, 1, "%s: %+v", name, got)
		assert.Equal(t, policy.PullRequestTargetCheckout, got[0].Code, name)
	}
}

func TestQuotedNamesAreSafe(t *testing.T) {
	t.Parallel()
	wf := "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 1\n    steps:\n      - run: x\n        env:\n          \"\u00e9:1::error::A_TOKEN\": literal\n"
	got := policy.AuditLockRepository(map[string][]byte{".github/workflows/x.yml": []byte(wf)}, policy.LockRepositoryOptions{})
	require.Len(t, got, 1)
	assert.Equal(t, policy.CredentialLiteral, got[0].Code)
	assert.Equal(t, `"\u00e9\x3a1\x3a\x3aerror\x3a\x3aA_TOKEN"`, got[0].Detail)
	assert.NotContains(t, got[0].Detail, "literal")
}
