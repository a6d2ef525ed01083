package lockstate

import (
	"fmt"
	"time"
)

// RecentArrival is one element of the state's optional "recentArrivals"
// array (every schema; issue 23): the first write (join or admission) of a
// job that has an arrival ticket (every App-authenticated job of this port,
// paced or not, so a burst counts the writers it was not paced with). A ticket is
// the App JWT's primary rate-limit count (x-ratelimit-used) at the job's
// token mint, in the window named by that answer's x-ratelimit-reset: every
// job of the App mints a token when it starts, so tickets number the App's
// arrivals in order, and the tickets between two logged ones count the
// arrivals that have not written yet (internal/actions/acquire/herd.go).
//
// The log only paces the first writes of a burst; no admission, release or
// recovery decision reads it. The JavaScript reference and older Go builds
// drop the array on their next rewrite, after which bursts are paced from
// an empty log (see docs/state-schema.md).
type RecentArrival struct {
	// At is when the logged write was made (canonical timestamp).
	At string
	// Window is the ticket's rate-limit window (x-ratelimit-reset, epoch
	// seconds); Count is x-ratelimit-used at the job's token mint.
	Window int64
	Count  int64
	// Minted is when the job's token mint answered (canonical timestamp,
	// the writer's clock; "" from older builds): the arrival itself, where
	// At is its first write, which a paced or spread-out join makes long
	// after (herd.go's logRate).
	Minted string
}

const (
	// ArrivalLogWindow is how long a logged first write stays in the log
	// at least: a burst paces its writes against the arrivals of the last
	// minute (GitHub's secondary limit counts per minute), plus margin.
	// An entry leaves only once every lower ticket of its window has left
	// (LiveArrivals).
	ArrivalLogWindow = 70 * time.Second
	// MaxRecentArrivals bounds the log (GitHub allows 80 content-creating
	// requests a minute, so a minute never holds more first writes).
	MaxRecentArrivals = 128
)

// NoteArrival logs a first write made at now with the ticket
// (window, count): it keeps LiveArrivals(now) (and drops the oldest beyond
// MaxRecentArrivals) and appends the new one. A ticket the caller does not
// have (window <= 0) only prunes.
func (s *State) NoteArrival(now time.Time, window, count int64) {
	s.NoteMintedArrival(now, time.Time{}, window, count)
}

// NoteMintedArrival is NoteArrival with the time the ticket was minted
// (zero: not known, logged without one).
func (s *State) NoteMintedArrival(now, minted time.Time, window, count int64) {
	a := RecentArrival{At: FormatTime(now), Window: window, Count: count}
	if !minted.IsZero() {
		a.Minted = FormatTime(minted)
	}
	kept := s.LiveArrivals(now)
	if a.valid() {
		kept = append(kept, a)
	}
	if len(kept) > MaxRecentArrivals {
		kept = kept[len(kept)-MaxRecentArrivals:]
	}
	s.RecentArrivals = kept
}

// LiveArrivals is the arrival log as a write at now keeps it: entries leave
// lowest ticket first, window by window, an entry once it is
// ArrivalLogWindow old and no lower ticket of its window is left (and an
// entry stamped more than ArrivalLogWindow after now at once, a skewed
// clock's). A reader counts the tickets between the lowest logged one and
// its own that are not logged as arrivals that have not written yet, so a
// written ticket must not leave while a lower one stays: pruned by age
// alone, the first wave's writes (spread by ticket, not in ticket order)
// left before lower tickets written after them, and every reader then
// counted them as arrivals ahead, one slot each (bench
// burst-20-quarter-limits: one admission every two slots,
// docs/performance.md §16). The order of the entries is kept; nil when
// none is left.
func (s *State) LiveArrivals(now time.Time) []RecentArrival {
	stamp := func(a RecentArrival) (time.Time, bool) { return ParseStateTime(a.At) }
	// The lowest ticket still young, per window: everything below it
	// that is old leaves, everything above it stays.
	floor := map[int64]int64{}
	for _, a := range s.RecentArrivals {
		if t, ok := stamp(a); ok && now.Sub(t) < ArrivalLogWindow && !t.After(now.Add(ArrivalLogWindow)) {
			if f, seen := floor[a.Window]; !seen || a.Count < f {
				floor[a.Window] = a.Count
			}
		}
	}
	var kept []RecentArrival
	for _, a := range s.RecentArrivals {
		t, ok := stamp(a)
		if !ok || t.After(now.Add(ArrivalLogWindow)) {
			continue
		}
		if f, young := floor[a.Window]; now.Sub(t) < ArrivalLogWindow || (young && a.Count > f) {
			kept = append(kept, a)
		}
	}
	return kept
}

// appendRecent is a pacing log (recentHolds) after a write
// at now: the entries stamped (at) less than window before now and not
// more than window after it, then add when ok, then the newest limit of
// them; nil when none is left.
func appendRecent[T any](log []T, now time.Time, window time.Duration, limit int, at func(T) string, add T, ok bool) []T {
	kept := log[:0:0]
	for _, e := range log {
		if t, valid := ParseStateTime(at(e)); valid && now.Sub(t) < window && !t.After(now.Add(window)) {
			kept = append(kept, e)
		}
	}
	if ok {
		kept = append(kept, add)
	}
	if len(kept) > limit {
		kept = kept[len(kept)-limit:]
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// decodeRecentArrivals reads the optional top-level recentArrivals array.
// Fail closed like every other field: a malformed log is a document no
// correct client writes.
func decodeRecentArrivals(s *State, obj map[string]any) error {
	return decodeTimedLog(s, obj, "recentArrivals", MaxRecentArrivals, CodeInvalidRecentArrivals, func(i int, m map[string]any, at string) string {
		window, okW := safeInteger(m["window"])
		count, okC := safeInteger(m["count"])
		a := RecentArrival{At: at, Window: window, Count: count}
		if v, has := m["minted"]; has {
			minted, isString := v.(string)
			if _, canonical := ParseStateTime(minted); !isString || !canonical {
				return fmt.Sprintf("[%d].minted must be a canonical ISO-8601 UTC timestamp", i)
			}
			a.Minted = minted
		}
		if !okW || !okC || !a.valid() {
			return fmt.Sprintf("[%d] needs window, a positive integer, and count, a non-negative integer (up to %d)", i, MaxFencingToken)
		}
		s.RecentArrivals = append(s.RecentArrivals, a)
		return ""
	})
}

// decodeTimedLog reads the optional top-level array key of a pacing log
// (recentArrivals, recentHolds): at most limit objects, each with a
// canonical "at", which add checks further and keeps, returning what is
// wrong with element i ("" when nothing is). Every failure is an error of
// code naming the key.
func decodeTimedLog(s *State, obj map[string]any, key string, limit int, code Code, add func(i int, m map[string]any, at string) string) error {
	v, ok := obj[key]
	if !ok {
		return nil
	}
	fail := func(detail string) error {
		return newError(code, fmt.Sprintf("decode lock state %q: %s %s", s.Lock, key, detail))
	}
	list, isList := v.([]any)
	if !isList {
		return fail("must be an array")
	}
	if len(list) > limit {
		return fail(fmt.Sprintf("has %d elements; at most %d are allowed", len(list), limit))
	}
	for i, item := range list {
		m, isObj := item.(map[string]any)
		if !isObj {
			return fail(fmt.Sprintf("[%d] must be an object", i))
		}
		at, isString := m["at"].(string)
		if _, canonical := ParseStateTime(at); !isString || !canonical {
			return fail(fmt.Sprintf("[%d].at must be a canonical ISO-8601 UTC timestamp", i))
		}
		if detail := add(i, m, at); detail != "" {
			return fail(detail)
		}
	}
	return nil
}

// validateRecentArrivals is Encode's check of the log (the decoder's rules).
func validateRecentArrivals(s *State) error {
	if len(s.RecentArrivals) > MaxRecentArrivals {
		return newError(CodeInvalidRecentArrivals, fmt.Sprintf("validate lock state %q: recentArrivals has %d elements; at most %d are allowed", s.Lock, len(s.RecentArrivals), MaxRecentArrivals))
	}
	for i, a := range s.RecentArrivals {
		if !a.valid() {
			return newError(CodeInvalidRecentArrivals, fmt.Sprintf("validate lock state %q: recentArrivals[%d] is not a canonical timestamp with a positive window and a non-negative count", s.Lock, i))
		}
	}
	return nil
}

// valid is the rule of one logged arrival: a canonical timestamp (and a
// canonical minted one, when there is one), a positive window and a non-negative count, both within JavaScript's safe
// integers.
func (a RecentArrival) valid() bool {
	_, ok := ParseStateTime(a.At)
	if a.Minted != "" {
		_, minted := ParseStateTime(a.Minted)
		ok = ok && minted
	}
	return ok && a.Window > 0 && a.Window <= MaxFencingToken && a.Count >= 0 && a.Count <= MaxFencingToken
}

// recentArrivalsNode is the JSON form of the log.
func recentArrivalsNode(log []RecentArrival) jsonArray {
	arr := make(jsonArray, 0, len(log))
	for _, a := range log {
		obj := jsonObject{
			{"at", jsonString(a.At)},
			{"window", jsonInt(a.Window)},
			{"count", jsonInt(a.Count)},
		}
		if a.Minted != "" {
			obj = append(obj, jsonMember{"minted", jsonString(a.Minted)})
		}
		arr = append(arr, obj)
	}
	return arr
}
