// Package evidence holds the pure rules of Unity license-return evidence
// (unity-lifecycle-facts.md §2-3, reference-behavior.md §1.9-1.10): the
// nine-rule classification precedence, credential and activation-serial
// redaction, the strict text decoding of evidence files, the evidence digest,
// and the run-scoped evidence path names.
//
// It does no I/O and reads no clock. The return action
// (internal/actions/returnlicense) redacts with it before anything touches
// disk; the classifier (internal/actions/cleanupevidence) reads the files with
// bounds and identity checks and then calls [Classify].
//
// Safety rules:
//
//   - Severity first. A 20111 marker anywhere wins over everything, even an
//     incomplete capture; an incomplete capture wins over every other rule;
//     only rule 8 (both exact positive lines in the return log of a completed
//     command) ever yields a confirmed report. Adding text to a log can only
//     move the verdict towards a more severe rule (fuzzed).
//   - Every verdict is a report release accepts (lockstate.ValidateReport).
//   - Redaction replaces every credential value, longest first, then every
//     activation serial; nothing else is interpreted.
package evidence
