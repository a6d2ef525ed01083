package machinequeue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Format is the value of the state's "format" key: a file that does not
// carry it is not a machine queue and is refused.
const Format = "buildlock-machine-queue"

// Version is the state format version this build reads and writes. A file
// of a higher version is refused with CodeNewerFormat (never rewritten).
const Version = 1

// Bounds.
const (
	// MinSlots and MaxSlots bound K, the number of slots a request asks
	// for (the action input machine-slots).
	MinSlots = 1
	MaxSlots = 64
	// MaxEntries bounds holders plus waiters. A machine runs a handful of
	// runner agents; the bound only keeps a runaway from growing the file.
	MaxEntries = 512
	// MaxHolderIDBytes bounds a holder id.
	MaxHolderIDBytes = 512
	// MaxStartBytes bounds a process start token.
	MaxStartBytes = 128
)

// Process identifies one process for its whole life: its pid and an
// OS-specific token of its start time (package liveness writes and judges
// it), so a pid reused by a later process is never taken for the recorded
// one.
type Process struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

// IsZero reports whether p is the zero Process.
func (p Process) IsZero() bool { return p == Process{} }

// String formats p for messages.
func (p Process) String() string {
	return "pid " + strconv.Itoa(p.PID) + " (start " + strconv.Quote(p.Start) + ")"
}

func (p Process) problem() string {
	switch {
	case p.PID <= 0:
		return fmt.Sprintf("pid %d is not positive", p.PID)
	case p.Start == "":
		return "start time is empty"
	case len(p.Start) > MaxStartBytes:
		return fmt.Sprintf("start time is longer than %d bytes", MaxStartBytes)
	}
	for _, r := range p.Start {
		if r < 0x21 || r > 0x7e {
			return "start time is not printable ASCII"
		}
	}
	return ""
}

// Holder is one held slot.
type Holder struct {
	// HolderID identifies the job (the caller chooses it, for example the
	// organization lock's holder id).
	HolderID string `json:"holderId"`
	// Slot is the slot number, 1..Slots, unique among holders, kept until
	// the holder leaves.
	Slot int `json:"slot"`
	// Slots is the K this holder asked for.
	Slots int `json:"slots"`
	// Owner is the process whose life bounds the slot (the job's process).
	Owner Process `json:"owner"`
	// QueuedAt is when the holder joined the queue, AdmittedAt when it was
	// given its slot (canonical UTC, milliseconds).
	QueuedAt   string `json:"queuedAt"`
	AdmittedAt string `json:"admittedAt"`
}

// Waiter is one queue entry.
type Waiter struct {
	HolderID string `json:"holderId"`
	// Slots is the K this waiter asked for.
	Slots int `json:"slots"`
	// Owner is the process whose life bounds the slot once admitted.
	Owner Process `json:"owner"`
	// Waiter is the process waiting in Take for this entry.
	Waiter   Process `json:"waiter"`
	QueuedAt string  `json:"queuedAt"`
}

// State is the queue file: holders in admission order, then waiters in FIFO
// order.
type State struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Holders []Holder `json:"holders"`
	Queue   []Waiter `json:"queue"`
}

// New returns the empty state (what a missing queue file means).
func New() *State {
	return &State{Format: Format, Version: Version, Holders: []Holder{}, Queue: []Waiter{}}
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := *s
	c.Holders = append([]Holder{}, s.Holders...)
	c.Queue = append([]Waiter{}, s.Queue...)
	return &c
}

// FormatTime is the canonical timestamp of the state: UTC, milliseconds
// (lockstate.FormatTime, the organization lock's format).
func FormatTime(t time.Time) string { return lockstate.FormatTime(t) }

// ParseTime parses a canonical timestamp written by FormatTime.
func ParseTime(s string) (time.Time, bool) {
	t, ok := lockstate.ParseTime(s)
	if !ok || lockstate.FormatTime(t) != s {
		return time.Time{}, false
	}
	return t, true
}

// Decode reads a queue file strictly: valid UTF-8, no repeated keys, no
// unknown keys, exactly one JSON object, every invariant of the package
// (see Validate). It never repairs anything.
func Decode(data []byte) (*State, error) {
	if e := lockstate.CheckStrictJSON(data); e != nil {
		return nil, Errorf(CodeCorrupt, "read the machine queue: %s", e.Error())
	}
	// Look at the version first, so a newer file is reported as newer
	// even when it has keys this build does not know.
	var head struct {
		Format  string          `json:"format"`
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &Error{Code: CodeCorrupt, Message: "read the machine queue: not a JSON object", Err: err}
	}
	if head.Format != Format {
		return nil, Errorf(CodeCorrupt, "read the machine queue: format is %q, want %q", clip(head.Format), Format)
	}
	if v, err := strconv.Atoi(string(head.Version)); err == nil && v > Version {
		return nil, Errorf(CodeNewerFormat, "read the machine queue: format version %d was written by a newer build (this one reads %d); upgrade the actions on this machine", v, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		return nil, &Error{Code: CodeCorrupt, Message: "read the machine queue", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(CodeCorrupt, "read the machine queue: data after the state object")
	}
	if err := Validate(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Encode validates s and returns its file bytes (indented JSON and a
// newline). It never writes what Decode would refuse.
func Encode(s *State) ([]byte, error) {
	if err := Validate(s); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, &Error{Code: CodeCorrupt, Message: "encode the machine queue", Err: err}
	}
	return append(b, '\n'), nil
}

// Validate checks every invariant of a state: format and version, arrays
// present, at most MaxEntries entries, well-formed entries (holder id,
// K in 1..64, processes, canonical timestamps, admission not before
// queueing), holder ids unique across holders and queue, slot numbers in
// 1..K and unique, and capacity: len(Holders) <= Slots of every holder.
func Validate(s *State) error {
	bad := func(format string, args ...any) error {
		return Errorf(CodeCorrupt, "machine queue: "+format, args...)
	}
	switch {
	case s == nil:
		return bad("state is nil")
	case s.Format != Format:
		return bad("format is %q, want %q", clip(s.Format), Format)
	case s.Version > Version:
		return Errorf(CodeNewerFormat, "machine queue: format version %d is newer than this build's %d", s.Version, Version)
	case s.Version != Version:
		return bad("format version %d is not %d", s.Version, Version)
	case s.Holders == nil:
		return bad("holders must be an array")
	case s.Queue == nil:
		return bad("queue must be an array")
	case len(s.Holders)+len(s.Queue) > MaxEntries:
		return bad("%d entries, more than %d", len(s.Holders)+len(s.Queue), MaxEntries)
	}
	ids := map[string]bool{}
	slots := map[int]bool{}
	for i, h := range s.Holders {
		where := fmt.Sprintf("holders[%d]", i)
		if p := holderIDProblem(h.HolderID); p != "" {
			return bad("%s: holder id %s", where, p)
		}
		if ids[h.HolderID] {
			return bad("%s: holder id %q appears twice", where, clip(h.HolderID))
		}
		ids[h.HolderID] = true
		if h.Slots < MinSlots || h.Slots > MaxSlots {
			return bad("%s: slots %d is outside %d..%d", where, h.Slots, MinSlots, MaxSlots)
		}
		if h.Slot < 1 || h.Slot > h.Slots {
			return bad("%s: slot %d is outside 1..%d", where, h.Slot, h.Slots)
		}
		if slots[h.Slot] {
			return bad("%s: slot %d is held twice", where, h.Slot)
		}
		slots[h.Slot] = true
		if len(s.Holders) > h.Slots {
			return bad("%d holders, but %s (%q) allows at most %d", len(s.Holders), where, clip(h.HolderID), h.Slots)
		}
		if p := h.Owner.problem(); p != "" {
			return bad("%s: owner %s", where, p)
		}
		q, ok1 := ParseTime(h.QueuedAt)
		a, ok2 := ParseTime(h.AdmittedAt)
		if !ok1 || !ok2 {
			return bad("%s: queuedAt %q and admittedAt %q must be canonical UTC timestamps", where, clip(h.QueuedAt), clip(h.AdmittedAt))
		}
		if a.Before(q) {
			return bad("%s: admittedAt %s is before queuedAt %s", where, h.AdmittedAt, h.QueuedAt)
		}
	}
	for i, w := range s.Queue {
		where := fmt.Sprintf("queue[%d]", i)
		if p := holderIDProblem(w.HolderID); p != "" {
			return bad("%s: holder id %s", where, p)
		}
		if ids[w.HolderID] {
			return bad("%s: holder id %q appears twice", where, clip(w.HolderID))
		}
		ids[w.HolderID] = true
		if w.Slots < MinSlots || w.Slots > MaxSlots {
			return bad("%s: slots %d is outside %d..%d", where, w.Slots, MinSlots, MaxSlots)
		}
		if p := w.Owner.problem(); p != "" {
			return bad("%s: owner %s", where, p)
		}
		if p := w.Waiter.problem(); p != "" {
			return bad("%s: waiter %s", where, p)
		}
		if _, ok := ParseTime(w.QueuedAt); !ok {
			return bad("%s: queuedAt %q must be a canonical UTC timestamp", where, clip(w.QueuedAt))
		}
	}
	return nil
}

// holderIDProblem returns why id is not a valid holder id, or "".
func holderIDProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case len(id) > MaxHolderIDBytes:
		return fmt.Sprintf("is longer than %d bytes", MaxHolderIDBytes)
	case !utf8.ValidString(id):
		return "is not valid UTF-8"
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "contains a control character"
		}
	}
	return ""
}

// clip shortens s for a message.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
