// Package actioncontract holds the contract between the action.yml files
// under .github/actions and the Go binaries they launch: [Registry] lists, per
// action, the binary and its input and output names, and the package's tests
// check every action.yml, the launcher (tools/launcher) and the workflows
// (with actionlint) against it. [MisplacedExpressions] finds `${{` in action
// metadata outside the places GitHub evaluates it (runs:, outputs.<id>.value,
// inputs.<id>.default), which makes GitHub refuse to load the action; GitHub's
// own parser checks the same files in tools/workflow-parser. It has no
// runtime role.
package actioncontract
