package acttest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stubActions are the third-party actions the harness can stand in for,
// each a composite action that checks what the real one would have
// provided on this machine and changes nothing.
var stubActions = map[string]string{
	// act copies the workspace itself and skips a local actions/checkout;
	// the stub only runs for a checkout of another repository, which it
	// refuses (offline, there is nothing to check out).
	"actions/checkout": `name: checkout (acttest stub)
description: Stands in for actions/checkout under the act harness; act copies the workspace itself.
inputs:
  repository: {required: false, default: ""}
  ref: {required: false, default: ""}
  fetch-depth: {required: false, default: "1"}
  persist-credentials: {required: false, default: "true"}
  path: {required: false, default: ""}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        REPOSITORY: ${{ inputs.repository }}
        SELF: ${{ github.repository }}
      run: |
        if [ -n "$REPOSITORY" ] && [ "$REPOSITORY" != "$SELF" ]; then
          echo "::error title=acttest-checkout::the act harness cannot check out $REPOSITORY offline; add it to the workspace or stub the step" >&2
          exit 1
        fi
        git -C "$GITHUB_WORKSPACE" rev-parse --verify HEAD >/dev/null
`,
	// The host's Go is the Go: the stub checks that it exists and, with
	// go-version-file, that its major.minor is the file's go line.
	"actions/setup-go": `name: setup-go (acttest stub)
description: Stands in for actions/setup-go under the act harness; the host's Go is used.
inputs:
  go-version: {required: false, default: ""}
  go-version-file: {required: false, default: ""}
  cache: {required: false, default: "false"}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        WANT: ${{ inputs.go-version }}
        WANT_FILE: ${{ inputs.go-version-file }}
      run: |
        have=$(go env GOVERSION) || { echo "::error title=acttest-setup-go::no Go on the host" >&2; exit 1; }
        if [ -n "$WANT_FILE" ]; then
          WANT=$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$GITHUB_WORKSPACE/$WANT_FILE" | head -n1)
        fi
        case "$have." in
        "go$WANT".*|"go$WANT") echo "acttest setup-go: $have satisfies ${WANT:-any}" ;;
        *) [ -z "$WANT" ] || { echo "::error title=acttest-setup-go::the host has $have, the workflow asks for $WANT" >&2; exit 1; } ;;
        esac
`,
	"actions/setup-node": `name: setup-node (acttest stub)
description: Stands in for actions/setup-node under the act harness; the host's Node.js is used.
inputs:
  node-version: {required: false, default: ""}
  cache: {required: false, default: ""}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        WANT: ${{ inputs.node-version }}
      run: |
        have=$(node --version) || { echo "::error title=acttest-setup-node::no Node.js on the host" >&2; exit 1; }
        major=${have#v}; major=${major%%.*}
        if [ -n "$WANT" ] && [ "$major" -lt "${WANT%%.*}" ]; then
          echo "::error title=acttest-setup-node::the host has $have, the workflow asks for $WANT" >&2; exit 1
        fi
        echo "acttest setup-node: $have"
`,
}

// StubbedActions lists the third-party actions Stubs can stand in for.
func StubbedActions() []string {
	out := make([]string, 0, len(stubActions))
	for k := range stubActions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Stubs writes a local stub for every third-party action in uses (every
// uses whose OWNER/REPO is not own) under dir and returns the mapping for
// Run.Actions. An action it has no stub for is an error naming it: write
// one, or map it yourself.
func Stubs(dir, own string, uses []Uses) (map[string]string, error) {
	out := map[string]string{}
	var unknown []string
	for _, u := range uses {
		name := u.Owner + "/" + u.Repo
		if strings.EqualFold(name, own) {
			continue
		}
		body, ok := stubActions[strings.ToLower(name)]
		if !ok {
			unknown = append(unknown, u.String())
			continue
		}
		d := filepath.Join(dir, strings.ToLower(u.Owner)+"_"+strings.ToLower(u.Repo)+"_"+u.Ref)
		p := d
		if u.Path != "" {
			p = filepath.Join(d, filepath.FromSlash(u.Path))
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(p, "action.yml"), []byte(body), 0o644); err != nil {
			return nil, err
		}
		out[u.Key()] = d
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("acttest: no stub for %s (stubbed: %s); map it to a local directory yourself", strings.Join(unknown, ", "), strings.Join(StubbedActions(), ", "))
	}
	return out, nil
}
