package machinequeue

import (
	"errors"
	"fmt"
)

// Code is a stable, kebab-case reason code carried by every *Error of the
// machine queue (this package and its store). It is what the
// `::error title=<code>::` line and the job summary show.
type Code string

// Reason codes.
const (
	// CodeCorrupt means the queue file is not a valid machine-queue state:
	// not JSON, duplicate keys, a broken invariant. Nothing is written.
	CodeCorrupt Code = "machine-queue-corrupt"
	// CodeNewerFormat means the queue file was written by a newer build
	// (a format version above Version). Nothing is written.
	CodeNewerFormat Code = "machine-queue-newer-format"
	// CodeInvalidRequest means a Take or Release request is malformed
	// (empty holder id, K outside 1..64, a process without pid or start).
	CodeInvalidRequest Code = "machine-queue-invalid-request"
	// CodeHolderConflict means the holder id is already queued or holding
	// for another owner process that is not proven dead.
	CodeHolderConflict Code = "machine-queue-holder-conflict"
	// CodeOwnerDead means the caller's own owner or waiting process is
	// proven dead: the request would be reclaimed as soon as it was written.
	CodeOwnerDead Code = "machine-queue-owner-dead"
	// CodeQueueFull means the queue already has MaxEntries entries.
	CodeQueueFull Code = "machine-queue-full"
	// CodeUnavailable means the store could not use the machine queue
	// directory (create, lock, read, write or rename failed).
	CodeUnavailable Code = "machine-queue-unavailable"
	// CodeEntryRemoved means the caller's queue entry disappeared while it
	// waited: a release for the same holder id and owner (the job's own
	// release or post step) removed it, so the wait stops instead of
	// joining again.
	CodeEntryRemoved Code = "machine-queue-entry-removed"
	// CodeCancelled means the caller's context ended before a slot was
	// held; the caller's queue entry (or a slot taken at that moment) was
	// removed again, unless Error.Err says the removal failed too.
	CodeCancelled Code = "machine-queue-cancelled"
)

// Error is the error type of the machine queue. Message is operator
// actionable; Err, when set, is the underlying cause (an I/O error, the
// context's error).
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error returns the message (with the cause), or the code when no message
// was set.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = string(e.Code)
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonCode returns the stable reason code (lockaction.Reasoned).
func (e *Error) ReasonCode() string { return string(e.Code) }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the Code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
