// Package returnlicense is the return-unity-license action
// (reference-behavior §1.9, unity-lifecycle-facts §1-2): it returns the
// Unity license a licensed job used and captures the evidence the
// classifier (classify-unity-cleanup-evidence) turns into release's typed
// cleanup report. It never classifies its own evidence.
//
// Order of work, each step failing closed:
//
//  1. The credentials are masked (::add-mask::) before anything is printed.
//  2. return-command-completed=false and evidence-capture-complete=false are
//     written, then return-log-path as soon as its parts are validated.
//  3. The platform: Windows runs; macOS is refused by policy until a
//     reviewed Unity team identifier and a native run exist
//     (signature.DarwinReturnApproved); every other platform is refused.
//  4. The editor path is derived only from tool-cache, unity-version and
//     editor-layout; a link or reparse point anywhere in it is refused, and
//     it must be a regular file.
//  5. The editor's signature is verified (internal/unity/signature); on
//     Windows the verified handle stays open, denying writers, until the
//     command has ended.
//  6. The evidence directory is recreated; the command runs under
//     process-tree control (internal/unity/returncmd); its output is
//     redacted and written once; the outputs follow.
//
// The step fails unless the command completed with exit code 0 and the
// evidence was captured completely.
package returnlicense
