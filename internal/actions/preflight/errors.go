package preflight

// Stable reason codes of a failed preflight (docs/actions.md).
const (
	// ReasonNoVisibleGroup: the calling repository can use no runner group
	// of the organization, so no self-hosted job of it can ever start.
	ReasonNoVisibleGroup = "NO_VISIBLE_RUNNER_GROUP"
	// ReasonLabelSetWithoutRunner: a required label set has no registered
	// runner in the visible groups.
	ReasonLabelSetWithoutRunner = "LABEL_SET_WITHOUT_RUNNER"
	// ReasonInventoryUnreadable: GitHub refused the reads (a missing
	// installation or permission, a 403 or 404) or answered with data that
	// is not a runner inventory (an HTML page, invalid JSON, a body over
	// MaxResponseBytes). Retrying does not help; the message names what
	// the answer was and what to fix.
	ReasonInventoryUnreadable = "RUNNER_INVENTORY_UNREADABLE"
	// ReasonInventoryInconsistent: a label set found no runner (or no
	// group was visible) and the inventory, read twice, changed both times
	// while it was read, so it cannot prove the absence; or a listing needs
	// more than 10 pages. Re-run the job. (An inconsistent read in which
	// every label set has a runner passes, with a warning.)
	ReasonInventoryInconsistent = "RUNNER_INVENTORY_INCONSISTENT"
	// ReasonAPIUnavailable: retryable API failures outlasted the retry
	// budget or the 150 s deadline. This is an availability failure of the
	// GitHub API, never evidence that a runner is missing.
	ReasonAPIUnavailable = "RUNNER_INVENTORY_API_UNAVAILABLE"
)

// Error is a failed preflight: a stable reason code and a message an
// operator can act on. It never carries a credential.
type Error struct {
	Reason  string
	Message string
	// Err is the underlying (scrubbed) cause, if any.
	Err error
}

// Error implements error as "<REASON>: <message>".
func (e *Error) Error() string { return e.Reason + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonCode returns Reason (the ::error title and job summary code).
func (e *Error) ReasonCode() string { return e.Reason }
