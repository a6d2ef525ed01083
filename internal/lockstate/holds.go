package lockstate

import (
	"fmt"
	"slices"
	"time"
)

// RecentHold is one element of the state's optional "recentHolds" array
// (every schema; issue 23): how long a job used its seat, from the moment
// its acquire saw itself admitted to its release. A direct handoff stamps
// the new holder's acquiredAt when the seat is handed, not when the job
// notices it, so a hold read off acquiredAt counts the time the seat sat
// handed but unnoticed, and a waiter that paces its polling by it sleeps
// longer the more seats sit unnoticed (docs/performance.md §15). The
// release knows when its own acquire exited; it logs that hold here.
//
// The log only paces: polling (internal/actions/acquire/poll.go) and a
// burst's paced first writes, which keep clear of the releases it
// forecasts (herd.go); no admission, release or recovery decision reads
// it. The JavaScript
// reference and older Go builds drop the array on their next rewrite, after
// which waiters pace as before until releases log holds again (see
// docs/state-schema.md).
type RecentHold struct {
	// At is when the release was decided (canonical timestamp).
	At string
	// HeldMs is the hold in milliseconds: the start of the release less
	// the time its acquire saw itself admitted (a release's lost races
	// are not the job's use of the seat).
	HeldMs int64
}

const (
	// MaxRecentHolds bounds the log: the holds of the last few releases.
	MaxRecentHolds = 8
	// HoldLogWindow is how long a logged hold stays in the log: older
	// holds say little about the queue's pace now.
	HoldLogWindow = time.Hour
	// maxHoldMs bounds one logged hold (a week: longer than any job runs).
	maxHoldMs = 7 * 24 * 3600 * 1000
)

// NoteHold logs a hold of held ending at now: it drops the entries older
// than HoldLogWindow (and the oldest beyond MaxRecentHolds) and appends the
// new one. A hold that is not positive or longer than a week (a skewed
// clock) only prunes.
func (s *State) NoteHold(now time.Time, held time.Duration) {
	h := RecentHold{At: FormatTime(now), HeldMs: held.Milliseconds()}
	s.RecentHolds = appendRecent(s.RecentHolds, now, HoldLogWindow, MaxRecentHolds, func(h RecentHold) string { return h.At }, h, h.valid())
}

// HoldRange is the median and the shortest of the n holds logged within
// HoldLogWindow of now (both 0 when n is 0). A waiter forecasts the release
// of a short hold from them (internal/actions/acquire, handwindow.go): the
// shortest bounds how early the next may end, and its distance to the
// median how far the holds spread. A paced first write keeps clear of the
// releases the median forecasts when that spread is small (herd.go).
func (s *State) HoldRange(now time.Time) (typical, shortest time.Duration, n int) {
	var holds []time.Duration
	for _, h := range s.RecentHolds {
		if t, ok := ParseStateTime(h.At); ok && now.Sub(t) < HoldLogWindow {
			holds = append(holds, time.Duration(h.HeldMs)*time.Millisecond)
		}
	}
	if len(holds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(holds)
	return holds[len(holds)/2], holds[0], len(holds)
}

// decodeRecentHolds reads the optional top-level recentHolds array. Fail
// closed like every other field: a malformed log is a document no correct
// client writes.
func decodeRecentHolds(s *State, obj map[string]any) error {
	return decodeTimedLog(s, obj, "recentHolds", MaxRecentHolds, CodeInvalidRecentHolds, func(i int, m map[string]any, at string) string {
		held, okH := safeInteger(m["heldMs"])
		h := RecentHold{At: at, HeldMs: held}
		if !okH || !h.valid() {
			return fmt.Sprintf("[%d].heldMs must be a positive integer of at most %d", i, maxHoldMs)
		}
		s.RecentHolds = append(s.RecentHolds, h)
		return ""
	})
}

// validateRecentHolds is Encode's check of the log (the decoder's rules).
func validateRecentHolds(s *State) error {
	if len(s.RecentHolds) > MaxRecentHolds {
		return newError(CodeInvalidRecentHolds, fmt.Sprintf("validate lock state %q: recentHolds has %d elements; at most %d are allowed", s.Lock, len(s.RecentHolds), MaxRecentHolds))
	}
	for i, h := range s.RecentHolds {
		if !h.valid() {
			return newError(CodeInvalidRecentHolds, fmt.Sprintf("validate lock state %q: recentHolds[%d] is not a canonical timestamp with a positive heldMs of at most %d", s.Lock, i, maxHoldMs))
		}
	}
	return nil
}

// valid is the rule of one logged hold: a canonical timestamp and a
// positive hold of at most a week.
func (h RecentHold) valid() bool {
	_, ok := ParseStateTime(h.At)
	return ok && h.HeldMs > 0 && h.HeldMs <= maxHoldMs
}

// recentHoldsNode is the JSON form of the log.
func recentHoldsNode(log []RecentHold) jsonArray {
	arr := make(jsonArray, 0, len(log))
	for _, h := range log {
		arr = append(arr, jsonObject{
			{"at", jsonString(h.At)},
			{"heldMs", jsonInt(h.HeldMs)},
		})
	}
	return arr
}
