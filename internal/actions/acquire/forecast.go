package acquire

import (
	"slices"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Release forecasts (docs/performance.md §10, "Polling around the forecast
// release"). A waiter that a release may hand the next seat polls fast,
// 1.5–2 s at the defaults, through the whole hold it waits for: ten reads a
// minute through a 10-minute Unity build, and still about a second of seat
// time lost per handoff. Holds of one lock are alike, so a waiter that saw
// holds end learns how long they last, forecasts when the holders ahead of
// it release and the earliest that may come, sleeps until that earliest
// time (at most poll-seconds at a time, so a hold that ends earlier still is
// noticed no later than the reference notices any release), polls at the
// fast interval from there and at the window interval around the forecast.
// The forecast only paces polling: safety never depends on it, and a wrong
// one costs reads (early) or notice (late, bounded by poll-seconds).
const (
	// WindowDivisor: around a forecast release the waiter polls every
	// max(Unit/2, Base/WindowDivisor) (0.5 s at the default 15 s base),
	// within its share of the fast read budget.
	WindowDivisor = 30
	// forecastHolds is how many observed holds the forecast keeps, and
	// minForecastSamples how many it needs.
	forecastHolds      = 5
	minForecastSamples = 2
	// MinForecastHold: holds shorter than MinForecastHold × Base are not
	// forecast: a waiter for a hold of a minute or less polls fast through
	// it, as the fast interval is then already a large share of the hold.
	MinForecastHold = 4
	// maxHoldUncertainty: a hold whose end is only known to lie between
	// two reads further apart than a quarter of it is not recorded.
	maxHoldUncertainty = 4
	// overdueSlowdown: past its forecast, the window interval grows by a
	// quarter of the time overdue, back to the fast interval.
	overdueSlowdown = 4
	// minMarginDivisor: however alike the holds seen, a waiter polls fast
	// from three quarters of the shortest on (a few holds say little about
	// how short the next can be).
	minMarginDivisor = 4
	// secondaryQuiet: holds seen within this long of a secondary-limit
	// wait of this run are not forecast from (a refused release stretches
	// holds that will not last as long again).
	secondaryQuiet = 10 * time.Minute
)

// holdLog learns how long holds last from the holders this waiter saw leave
// between two of its reads. A holder that was in the previous read and is
// gone from this one released at some time r between the two reads; when
// the release handed its seat on directly (lockstate.Handoff, schema <= 3)
// the new holder's acquiredAt is that release's time, otherwise r is taken
// as the previous read's time (a lower bound: forecasts err early, which
// costs reads, not notice). A hold whose end is that uncertain by more than
// a quarter of its length is not recorded.
type holdLog struct {
	// seen maps the previous read's holders (holderId) to their acquiredAt.
	seen   map[string]time.Time
	readAt time.Time
	// holds are the last forecastHolds observed holds, oldest first.
	holds []time.Duration
}

// observe records the holds that ended between the previous read and s,
// read at now.
func (h *holdLog) observe(s *lockstate.State, now time.Time) {
	cur := make(map[string]time.Time, len(s.Holders))
	var fresh []time.Time
	for _, x := range s.Holders {
		t, ok := lockstate.ParseTime(x.AcquiredAt)
		if !ok {
			continue
		}
		cur[x.HolderID] = t
		if _, was := h.seen[x.HolderID]; !was && h.seen != nil && t.After(h.readAt) && !t.After(now) {
			fresh = append(fresh, t)
		}
	}
	var gone []time.Time
	for id, t := range h.seen {
		if _, still := cur[id]; !still {
			gone = append(gone, t)
		}
	}
	slices.SortFunc(gone, time.Time.Compare)
	slices.SortFunc(fresh, time.Time.Compare)
	for i, acq := range gone {
		if now.Sub(h.readAt)*maxHoldUncertainty > h.readAt.Sub(acq) {
			continue
		}
		end := h.readAt
		if i < len(fresh) {
			// Paired in order: the i-th earliest holder to leave handed
			// its seat to the i-th earliest new holder.
			end = fresh[i]
		}
		if hold := end.Sub(acq); hold > 0 {
			h.holds = append(h.holds, hold)
		}
	}
	if n := len(h.holds); n > forecastHolds {
		h.holds = slices.Delete(h.holds, 0, n-forecastHolds)
	}
	h.seen, h.readAt = cur, now
}

// estimate is the typical hold (the median of those observed) and the
// earliest a hold is expected to end: the shortest observed, less twice its
// distance to the median and at least a quarter of it (a forecast errs
// early). ok is false before minForecastSamples holds were observed.
func (h *holdLog) estimate() (typical, earliest time.Duration, ok bool) {
	if len(h.holds) < minForecastSamples {
		return 0, 0, false
	}
	sorted := slices.Clone(h.holds)
	slices.Sort(sorted)
	lo, med := sorted[0], sorted[len(sorted)/2]
	return med, lo - max(2*(med-lo), lo/minMarginDivisor), true
}

// holdEnds is each holder's acquiredAt plus hold, in the holders' order;
// ok is false when an acquiredAt cannot be read or lies after now (a
// skewed writer clock), so nothing is forecast from it.
func holdEnds(holders []lockstate.Holder, hold time.Duration, now time.Time) (ends []time.Time, ok bool) {
	ends = make([]time.Time, 0, len(holders))
	for _, x := range holders {
		t, valid := lockstate.ParseTime(x.AcquiredAt)
		if !valid || t.After(now) {
			return nil, false
		}
		ends = append(ends, t.Add(hold))
	}
	return ends, true
}

// forecastRelease is when the release that can hand a seat to the waiter at
// admissible rank comes, if every hold lasts hold: the current holders
// release at acquiredAt + hold (one already past it at now), each release
// admits the next waiter, who releases one hold later, and rank r is handed
// the (r+1)-th seat freed. It errs early whenever fewer seats serve the
// waiter than there are holders (labels, a config that shrank), which is
// the safe direction. ok is false without holders or with an acquiredAt
// that cannot be read or lies in the future (a skewed writer clock).
func forecastRelease(holders []lockstate.Holder, hold time.Duration, rank int, now time.Time) (time.Time, bool) {
	if len(holders) == 0 || hold <= 0 || rank < 0 {
		return time.Time{}, false
	}
	ends, ok := holdEnds(holders, hold, now)
	if !ok {
		return time.Time{}, false
	}
	for range rank {
		i := earliest(ends)
		ends[i] = ends[i].Add(hold)
	}
	return ends[earliest(ends)], true
}

// oldestHold is how long the longest-held holder of s has held at now: 0
// without holders or when an acquiredAt cannot be read or lies in the
// future (a skewed writer clock), so the schedule does not rely on it.
func oldestHold(s *lockstate.State, now time.Time) time.Duration {
	var oldest time.Duration
	for _, x := range s.Holders {
		t, ok := lockstate.ParseTime(x.AcquiredAt)
		if !ok || t.After(now) {
			return 0
		}
		oldest = max(oldest, now.Sub(t))
	}
	return oldest
}

// earliest is the index of the earliest time in ts (non-empty).
func earliest(ts []time.Time) int {
	i := 0
	for j, t := range ts {
		if t.Before(ts[i]) {
			i = j
		}
	}
	return i
}

// releaseForecast fills the schedule's forecast from what this waiter
// observed: only while every seat is held (a free seat is taken at once)
// and for the ranks that poll fast.
func (q *acquirer) releaseForecast(s *lockstate.State, sch *Schedule) {
	if sch.Rank < 0 || sch.Rank >= FastRanks(sch.Seats) || lockstate.FreeSlots(s, q.cfg) > 0 {
		return
	}
	now := q.now()
	typical, shortest, ok := q.holds.estimate()
	if !ok || shortest < MinForecastHold*q.s.Poll || now.Sub(q.secondaryWarned) < secondaryQuiet {
		return
	}
	at, ok1 := forecastRelease(s.Holders, typical, sch.Rank, now)
	early, ok2 := forecastRelease(s.Holders, shortest, sch.Rank, now)
	if ok1 && ok2 {
		sch.Forecast, sch.UntilRelease, sch.ReleaseMargin = true, at.Sub(now), at.Sub(early)
	}
}
