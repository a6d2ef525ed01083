// Package openapi checks HTTP exchanges with the emulator against GitHub's
// own REST API description, the pinned @octokit/openapi package in
// tools/openapi (installed by `npm ci` from its lock file, as `make test`
// does).
//
// Load reads the description once per test binary, keeps the operations the
// emulator serves (and the components they reference), and builds one
// router. Check validates one exchange: the operation is described, the
// request's parameters and body are valid, the response status is
// documented for the operation (or is in Allowlist, each entry with its
// source), and the response body is valid for that status. Recorder is an
// http.RoundTripper that checks every exchange passing through it, and
// Middleware does the same for an http.Handler (a proxy in front of the
// standalone emulator). Violations whose operation is listed in
// RequiredFieldsPending as "required field missing" are reported, not
// failed: docs/emulator.md lists them.
package openapi
