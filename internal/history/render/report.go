package render

import (
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
)

// Report is everything one `buildlock history` run has to show.
type Report struct {
	// Repository and Branch name the lock repository and state branch.
	Repository string `json:"repository"`
	Branch     string `json:"branch"`
	// GeneratedAt is when the report was made.
	GeneratedAt time.Time    `json:"generated_at"`
	Locks       []LockReport `json:"locks"`
}

// LockReport is one lock's part of a report.
type LockReport struct {
	Lock string `json:"lock"`
	// Verify is the verification of the commits read.
	Verify *history.Result `json:"verify"`
	// Requests counts the API requests reading the history took.
	Requests int `json:"requests,omitempty"`
	// Remaining counts commits left for the next run by the read bound.
	Remaining int `json:"remaining,omitempty"`
	// Stats and WhatIf are the seat-demand report (nil for verify).
	Stats  *history.Stats  `json:"stats,omitempty"`
	WhatIf *history.WhatIf `json:"what_if,omitempty"`
}

// OK reports whether every lock verified clean and completely.
func (r *Report) OK() bool {
	for _, l := range r.Locks {
		if l.Verify == nil || !l.Verify.OK() || l.Remaining > 0 {
			return false
		}
	}
	return true
}

// Headline is the one-line summary of a lock: commits verified,
// violations, wait p50/p95 and seat utilization (when there are stats).
func (l LockReport) Headline() string {
	v := l.Verify
	s := ""
	switch {
	case v == nil:
		s = "not verified"
	case v.Status == history.StatusIncomplete:
		s = "INCOMPLETE (" + v.Incomplete + ")"
	default:
		s = plural(v.Commits, "commit") + " verified, " + plural(v.Violations(), "violation")
		if n := len(v.Findings) - v.Violations(); n > 0 {
			s += " (" + plural(n, "acknowledged finding") + ")"
		}
	}
	if l.Remaining > 0 {
		s += ", " + plural(l.Remaining, "commit") + " left for the next run"
	}
	if st := l.Stats; st != nil {
		s += ", wait p50 " + dur(st.Wait.P50) + " / p95 " + dur(st.Wait.P95) + " (" + plural(st.Wait.Count, "waiting job")
		if st.GaveUp > 0 {
			s += ", " + fmt.Sprint(st.GaveUp) + " gave up"
		}
		if st.StillWaiting > 0 {
			s += ", " + fmt.Sprint(st.StillWaiting) + " still waiting"
		}
		s += "), seats held by jobs " + pct(st.Utilization)
		if st.ReservedShare > 0 {
			s += " and by cooldowns or quarantines " + pct(st.ReservedShare)
		}
	}
	return s
}
