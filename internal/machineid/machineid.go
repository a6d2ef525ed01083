package machineid

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Reason codes of *Error.
const (
	// CodeUnavailable means the machine id could not be read or is not a
	// usable id (empty, malformed, a placeholder).
	CodeUnavailable = "machine-id-unavailable"
	// CodeInvalidRepository means the repository id to hash with is not a
	// positive number (a caller's bug: nothing was read).
	CodeInvalidRepository = "machine-id-invalid-repository"
)

// Error is a refusal of this package. Message is operator actionable and
// never contains the raw machine id.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error returns the message with its cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonCode returns the stable reason code (lockaction.Reasoned).
func (e *Error) ReasonCode() string { return e.Code }

func unavailable(source, why string, err error) *Error {
	return &Error{Code: CodeUnavailable, Message: fmt.Sprintf("read this machine's id from %s: %s (see docs/machine-queue.md, \"Machine identity\")", source, why), Err: err}
}

// Kind is the shape a source's value has.
type Kind int

const (
	// KindHex32 is a systemd/D-Bus machine id: 32 hex digits, one
	// trailing newline allowed.
	KindHex32 Kind = iota + 1
	// KindUUID is a UUID in its canonical 8-4-4-4-12 form (Windows
	// MachineGuid, macOS IOPlatformUUID); braces are allowed.
	KindUUID
)

// Raw is what a source gave: its name (a path, a registry value, a
// command) for messages, its kind, and the value exactly as read.
type Raw struct {
	Source string
	Kind   Kind
	Value  []byte
}

// Reader reads the machine's raw id from one OS source (or a chain of
// them). An error should be an *Error with CodeUnavailable.
type Reader interface {
	Read(ctx context.Context) (Raw, error)
}

// ReaderFunc adapts a function to Reader.
type ReaderFunc func(ctx context.Context) (Raw, error)

// Read calls f.
func (f ReaderFunc) Read(ctx context.Context) (Raw, error) { return f(ctx) }

// placeholders are well-known ids that name no one machine (hex, no
// dashes): the SMBIOS UUID of boards whose vendor never set one.
var placeholders = map[string]string{
	"03000200040005000006000700080009": "the placeholder SMBIOS UUID of boards whose vendor never set one",
}

// uninitialized is what /etc/machine-id holds while systemd's first boot
// has not completed (machine-id(5), "First Boot Semantics").
const uninitialized = "uninitialized"

// Parse validates a raw value and returns the 16 bytes of the id.
func Parse(r Raw) ([16]byte, error) {
	var id [16]byte
	v := r.Value
	switch r.Kind {
	case KindHex32:
		v = bytes.TrimSuffix(v, []byte("\n"))
		if string(v) == uninitialized {
			return id, unavailable(r.Source, `it says "uninitialized": the system's first boot has not completed and the id is about to change; retry after boot (systemd-machine-id-setup commits it)`, nil)
		}
		if len(v) == 0 {
			return id, unavailable(r.Source, "it is empty", nil)
		}
		if len(v) != 32 {
			return id, unavailable(r.Source, fmt.Sprintf("it is not 32 hexadecimal digits (%d bytes)", len(v)), nil)
		}
		if _, err := hex.Decode(id[:], v); err != nil {
			return id, unavailable(r.Source, "it is not 32 hexadecimal digits", nil)
		}
	case KindUUID:
		s := strings.TrimSpace(string(v))
		if s == "" {
			return id, unavailable(r.Source, "it is empty", nil)
		}
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			s = s[1 : len(s)-1]
		}
		if len(s) != 36 {
			return id, unavailable(r.Source, "it is not a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", nil)
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return id, unavailable(r.Source, "it is not a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", nil)
		}
		id = u
	default:
		return id, unavailable(r.Source, fmt.Sprintf("unknown kind %d", r.Kind), nil)
	}
	switch {
	case id == [16]byte{}:
		return id, unavailable(r.Source, "it is all zeros (no id was ever set)", nil)
	case id == allOnes:
		return id, unavailable(r.Source, "it is all ones, FF…FF (no id was ever set)", nil)
	}
	if why, ok := placeholders[hex.EncodeToString(id[:])]; ok {
		return id, unavailable(r.Source, "it is "+why+", shared by many machines", nil)
	}
	return id, nil
}

var allOnes = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// domain separates this derivation from any other keyed with the same id.
const domain = "buildlock-machine-v1:"

// Derive returns the machine's id for one repository: HMAC-SHA-256 keyed
// with id over domain and the repository's decimal id, truncated to 128
// bits, as 32 lowercase hex digits.
func Derive(id [16]byte, repositoryID int64) string {
	m := hmac.New(sha256.New, id[:])
	m.Write([]byte(domain + strconv.FormatInt(repositoryID, 10)))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// ID is the machine's id for one repository.
type ID struct {
	// Hash is Derive's result: what the state records.
	Hash string
	// Source says where the raw id was read (for logs; not the id).
	Source string
}

// ForRepository reads the machine id through r, validates it and derives
// the id for the lock repository with the numeric id repositoryID.
func ForRepository(ctx context.Context, r Reader, repositoryID int64) (ID, error) {
	if repositoryID <= 0 {
		return ID{}, &Error{Code: CodeInvalidRepository, Message: fmt.Sprintf("derive this machine's id: the lock repository's numeric id must be positive, got %d", repositoryID)}
	}
	raw, err := r.Read(ctx)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return ID{}, err
		}
		src := raw.Source
		if src == "" {
			src = "the operating system"
		}
		return ID{}, unavailable(src, "the read failed", err)
	}
	id, err := Parse(raw)
	if err != nil {
		return ID{}, err
	}
	return ID{Hash: Derive(id, repositoryID), Source: raw.Source}, nil
}
