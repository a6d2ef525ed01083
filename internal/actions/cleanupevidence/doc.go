// Package cleanupevidence is the classify-unity-cleanup-evidence action,
// served by `classify cleanup-evidence` (reference-behavior §1.10,
// unity-lifecycle-facts §3). It turns the return action's evidence into the
// typed cleanup report release takes: resource-cleanup-status,
// resource-health and resource-reason, plus resource-safe,
// evidence-digest and classification-complete.
//
// Order of work, each step failing closed:
//
//  1. GITHUB_OUTPUT must be set. The defaults false/unknown/healthy/
//     return-log-truncated/false/000…0 are written first, so a failure at
//     any later point leaves an unknown report (release then quarantines).
//  2. Inputs: completed and capture flags are literal true/false;
//     return-exit-code is present exactly when the command completed and
//     return-log-digest exactly when the capture did.
//  3. The return log must sit at the exact run-scoped path
//     <RUNNER_TEMP>/unity-return-<run id>-<attempt>-<suffix>/return-license.log,
//     with no link anywhere in its ancestry, as a regular file with one link.
//  4. The directory is claimed by an atomic rename to
//     <dir>.consuming-<32 hex>; it must then hold exactly that one file, the
//     same object, unchanged.
//  5. Bounded reads (25 MiB per file and in total, 256 files, 4,096
//     entries, .log/.txt, strict UTF-8) with identity re-checks between open
//     and read; the digest must match.
//  6. The nine-rule precedence (internal/unity/evidence.Classify).
//  7. The classified file is deleted by identity, its content re-verified
//     through the deleting handle, then the empty directory, and RUNNER_TEMP
//     is re-checked. Only then is the verdict written, as one block ending
//     with classification-complete=true.
//
// Supplemental evidence paths are read-only and never deleted: a relative
// path is read from GITHUB_WORKSPACE, a file named directly is read whatever
// its extension, a directory walk reads .log and .txt files (Node.js's
// path.extname, so a dot file ".log" is skipped) and stops when it reaches
// its 4,096th entry. A problem with one of them makes the capture
// incomplete (rule 2) but never fails the step, and collection goes on, so
// a 20111 in a later file still decides; the digest covers exactly the
// files read.
package cleanupevidence
