package cleanupevidence

// Stable reason codes of the classifier's refusals: the ::error title and
// the job summary name them (docs/actions.md). Input refusals keep
// actionio's codes (input-<code>).
const (
	// CodeOutputFileMissing: GITHUB_OUTPUT is not set, so nothing can be
	// reported.
	CodeOutputFileMissing = "output-file-missing"
	// CodeRunnerEnvironment: RUNNER_TEMP, GITHUB_RUN_ID or
	// GITHUB_RUN_ATTEMPT is not usable.
	CodeRunnerEnvironment = "runner-environment-invalid"
	// CodeReturnLogMissing: return-log-path is empty, or no return log
	// exists there: the return step did not run, failed before it wrote
	// its evidence, or is the reference's, which writes none when its
	// capture is incomplete.
	CodeReturnLogMissing = "return-log-missing"
	// CodeReturnLogPath: return-log-path is not this run's evidence path.
	CodeReturnLogPath = "return-log-path-invalid"
	// CodeReturnLogUnreadable: the return log is a link or sits under one,
	// has more than one link, is not a regular file, or cannot be read as
	// strict UTF-8 within its bound.
	CodeReturnLogUnreadable = "return-log-unreadable"
	// CodeDigestMissing: a return log exists but no return-log-digest binds
	// it to the return step (evidence-capture-complete=false without a
	// digest): it cannot be verified, so it is not classified.
	CodeDigestMissing = "return-log-digest-missing"
	// CodeDigestMismatch: the return log is not the one the return step
	// digested.
	CodeDigestMismatch = "return-log-digest-mismatch"
	// CodeClaimFailed: the evidence directory could not be taken over
	// (renamed to its private name) as the checked object.
	CodeClaimFailed = "evidence-claim-failed"
	// CodeDeleteFailed: the classified evidence could not be deleted by
	// identity.
	CodeDeleteFailed = "evidence-delete-failed"
)

// RefusalError is a refusal of the classifier: a stable Code and a message
// an operator can act on. The outputs stay at their defaults (a missing
// return log reports cleanup-evidence-unknown instead).
type RefusalError struct {
	Code    string
	Message string
	Err     error
}

// Error implements error as "<code>: <message>".
func (e *RefusalError) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause, if any.
func (e *RefusalError) Unwrap() error { return e.Err }

// ReasonCode returns Code (the ::error title and the job summary's code).
func (e *RefusalError) ReasonCode() string { return e.Code }

func refuse(code string, err error, msg string) error {
	if err != nil {
		msg += ": " + err.Error()
	}
	return &RefusalError{Code: code, Message: msg, Err: err}
}
