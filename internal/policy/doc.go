// Package policy is the organization's workflow policy analyzer: the pure
// rules that decide whether a consumer repository's workflows can hold a
// paid Unity seat forever or leak Unity credentials to an untrusted run
// (enrollment contract rules 1-11; docs/enrollment.md lists every finding
// code with its fix), and the smaller audits of the lock repository itself.
//
// # Input and output
//
// [Analyze] takes a [Snapshot] (one repository at one commit, as bytes:
// its workflow files, the local actions and local reusable workflows they
// use, and remote reusable workflows a reader fetched at their pinned
// commits) and a [Policy] (the lock repository, the registry's approved
// pins and exceptions, the protected default branch, and the injected now
// that decides exception expiry). It returns a [Result]: a source-free
// inventory (path, job, [Class]) and sorted [Finding]s (code, path, job,
// line; [Hint] gives the one-line fix). It does no I/O and reads no clock;
// the same input always gives the same output. [References] tells a reader
// which files the snapshot still lacks; internal/policy/snapshot has the
// readers of a local checkout and of a GitHub commit.
//
// # Built on actionlint
//
// Workflows are parsed by github.com/rhysd/actionlint's parser into its
// AST, and every ${{ }} is parsed by actionlint's expression parser, so
// always(), steps.<id>.outputs.acquired == 'true' and the trust expression
// are recognized as syntax trees: a guard written with other spacing, in
// either operand order or without ${{ }} is the same guard, and a string
// template such as "${{ always() }} && ${{ x }}" (always truthy) is not one.
// Where actionlint normalizes a value the contract wants literally, the
// same go.yaml.in/yaml/v4 tree is consulted: cancel-in-progress and
// fail-fast must be the plain YAML boolean false (not "false", "false ",
// False or an expression), timeouts a plain integer. A file actionlint
// cannot parse is a repository-analysis-incomplete finding, never skipped;
// actionlint's refusal of a look-alike at one of those literal keys is the
// rule's own finding instead.
//
// # The graph
//
// Local composite actions are followed transitively (a cycle stops the
// walk): their remote uses: are pinned-checked, and Unity credentials,
// activation, NODE_OPTIONS and provisioning inside them count for the step
// that uses them. A lock lifecycle action hidden in a composite cannot be
// ordered and is unreviewed-unity-reference. Reusable-workflow calls are
// edges: a local callee is analyzed with its callers' triggers in place of
// workflow_call; a remote callee is analyzed when the reader fetched it at
// its pinned commit (findings carry "owner/repo/path@sha" as the path);
// a mutable or unreadable callee is a finding and is treated as licensed.
//
// # Classification
//
// Each job gets one class, in precedence order: fallback-cleanup (a
// release of an explicit holder-id without acquire), paid-serial (acquire,
// Unity credentials, activation or the license return; controlled-canary
// when only workflow_dispatch starts the workflow), an exception's
// synthetic or disabled for a Unity-shaped job of an excepted file, and
// non-licensing-static. A Unity-shaped job that is none of these (a Unity
// runner label, a Unity editor invocation, a Unity-named action, a lock
// lifecycle action outside the pattern) is unreviewed-unity-reference.
//
// # Every workflow
//
// Credential and pull request hygiene holds for every workflow of the
// repository, licensed or not, and is shared with the lock repository's
// own audit (rules_hygiene.go): no secret or github.token in run:, shell:
// or an actions/github-script script:, no expression in uses:, no
// write-all, and no pull_request_target checkout or fetch of the pull
// request's code, however the ref reaches the command.
//
// # Coming from the reference
//
// [MigrationPlan] turns the findings a workflow the reference accepts gets
// here (the current-head guard, the fallback job, the typed aggregate)
// into the exact YAML to add, in order; `buildlock policy check
// --from-reference` prints it.
package policy
