// Package acttest runs a GitHub Actions workflow on this machine under
// nektos/act, offline, so a test can run the real workflow files of this
// repository (the release workflow) or of a consumer (the README's consumer
// workflow) against the project's GitHub emulator.
//
// What it does (docs/packaging.md, "Running workflows under act"):
//
//   - Jobs run on the host (act's -P <label>=-self-hosted): there is no
//     Docker engine here, and the steps need this machine's Go anyway.
//   - Nothing is fetched. Every remote `uses:` of the workflow must be
//     mapped to a local directory (act's --local-repository
//     OWNER/REPO@REF=DIR): this repository's own actions to the checkout
//     under test, third-party actions to the stubs of Stubs. A workflow
//     with an unmapped remote action, a docker:// action or a remote
//     reusable workflow is refused before act starts (CheckOffline).
//   - Git remotes can be redirected to local bare repositories (GitRemotes,
//     through git's url.<base>.insteadOf in the environment), so a step that
//     pushes a tag pushes it here.
//   - Commands can be replaced by stubs first on PATH (Commands), for a CLI
//     the emulator does not answer for (gh release create).
//   - GITHUB_API_URL and anything else a step reads come from Env; point it
//     at the emulator (emulator.New + httptest, or `buildlock emulator`).
//
// The act binary is found with Find: BUILD_LOCK_ACT names it (make test
// installs the pinned version, tools/versions.env ACT_VERSION), and its
// version must be Version. Tests skip without it, except under CI=true,
// where a missing act fails the test instead of hiding it.
package acttest
