package reap

import (
	"errors"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// Error is a reaper failure with a stable Code. It is returned after the
// outputs and the summary were written.
type Error struct {
	Code    string
	Message string
	// Err is the first underlying failure, if any.
	Err error
}

// Error renders "<code>: <message>[: <first failure>]".
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the first underlying failure.
func (e *Error) Unwrap() error { return e.Err }

// ReasonCode is the stable code in the ::error title and the summary's
// "Refused" heading (lockaction.Reasoned): the underlying failure's own
// reason when it names one an operator acts on (state-branch-rules), else
// the REAP_ code; the message carries both.
func (e *Error) ReasonCode() string {
	var r lockaction.Reasoned
	if errors.As(e.Err, &r) && r.ReasonCode() != "" {
		return r.ReasonCode()
	}
	return e.Code
}
