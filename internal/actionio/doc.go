// Package actionio is the only layer that talks to the GitHub Actions runtime:
// it reads inputs, writes outputs, action state and the step summary, masks
// secrets and emits one-line workflow commands.
//
// It wraps github.com/sethvargo/go-githubactions, always constructed with an
// injected getenv and writer (never the package-level default instance), so
// that every caller is testable without touching the process environment.
//
// # Input names and environment spellings
//
// The runner exposes an input of a node24 action as INPUT_<NAME> where NAME is
// upper-cased, spaces become underscores and hyphens are KEPT: `lock-name`
// arrives as INPUT_LOCK-NAME (spec §1.1; go-githubactions GetInput does the
// same). Composite actions get no INPUT_* variables at all
// (https://github.com/actions/runner/issues/665); our composite action.yml
// files therefore map every input explicitly into the step's env under the
// underscore spelling (INPUT_LOCK_NAME), because hyphenated names are not
// POSIX environment names and are not portable through every shell a runner
// may use (Git Bash on Windows, dash, PowerShell). [IO.Input] reads the
// hyphenated spelling first and falls back to the underscore spelling only
// when the hyphenated one is absent or empty, so the same binary works under
// the node24 shim and under a composite step. An empty value counts as absent.
//
// # Secrets
//
// Parsers return [*InputError], which names the input and the violated rule
// but never echoes the rejected value: inputs such as github-token carry
// credentials.
package actionio
