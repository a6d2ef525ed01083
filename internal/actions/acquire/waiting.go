package acquire

import (
	"fmt"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
)

// The wait log's rhythm: the position line at most once a minute (or when
// the position changes), and the explanation of what blocks the lock (a
// draining upgrade, seats all held by reservations) when it first appears,
// when it changes, and then every blockerLogEvery, so a job that waits a
// long time keeps telling its log reader what to do.
const (
	waitLogEvery    = time.Minute
	blockerLogEvery = 3 * time.Minute
)

// waitLog is what the wait log last printed.
type waitLog struct {
	at        time.Time
	position  int
	blocker   string
	blockerAt time.Time
}

// logWaiting prints the queue position and holders, then, when the lock is
// blocked by something only time or an operator ends, what it is and how it
// ends (waitBlocker).
func (q *acquirer) logWaiting(s *lockstate.State, dec lockstate.AcquireDecision) {
	now := q.now()
	q.noteDrain(dec.Upgrade, now)
	if dec.Position != q.wait.position || now.Sub(q.wait.at) >= waitLogEvery {
		q.wait.position, q.wait.at = dec.Position, now
		holders := "none"
		if len(s.Holders) > 0 {
			var hs []string
			for _, h := range s.Holders {
				hs = append(hs, h.HolderID+" ("+h.RunURL+")")
			}
			holders = strings.Join(hs, ", ")
		}
		q.a.Printf("Waiting for %s: queue position %d of %d after %s ms; holders: %s; reservations: %d",
			q.s.Target.Lock, dec.Position, len(s.Queue), actionkit.FormatMillis(now.Sub(q.started)), holders, len(s.Reservations))
	}
	text := q.waitBlocker(s, dec.Upgrade)
	if text == "" {
		q.wait.blocker = ""
		return
	}
	if text != q.wait.blocker || now.Sub(q.wait.blockerAt) >= blockerLogEvery {
		q.wait.blocker, q.wait.blockerAt = text, now
		q.a.Warning(text)
	}
}

// noteDrain accounts the time this run waited for a pending upgrade.
func (q *acquirer) noteDrain(u *lockstate.Upgrade, now time.Time) {
	switch {
	case u != nil && q.upgradeFrom.IsZero():
		q.upgradeFrom = now
	case u == nil && !q.upgradeFrom.IsZero():
		q.drainWaited += now.Sub(q.upgradeFrom)
		q.upgradeFrom = time.Time{}
	}
}

// drainOngoing is the part of an upgrade drain still being waited for.
func (q *acquirer) drainOngoing() time.Duration {
	if q.upgradeFrom.IsZero() {
		return 0
	}
	return q.now().Sub(q.upgradeFrom)
}

// waitBlocker explains, in one operator-actionable paragraph, what keeps
// the lock from admitting anyone that no waiting ends by itself soon: a
// pending upgrade that pauses admission until the lock drains, or every
// seat held by cooldowns and quarantines. "" when neither applies.
func (q *acquirer) waitBlocker(s *lockstate.State, u *lockstate.Upgrade) string {
	var b strings.Builder
	var quarantines []lockstate.Reservation
	switch {
	case u != nil:
		fmt.Fprintf(&b, "%s is draining for its upgrade from schema %d to schema %d (%s, turned on in %s): admission is paused until nothing is left to drain, and this run keeps its place in the queue. Waiting for: %s.",
			q.s.Target.Lock, u.From, u.To, u.Features(), q.st.ConfigPath(), u.Summary())
		quarantines = u.Quarantines()
		if u.Incident != nil {
			fmt.Fprintf(&b, " The active incident %s ends only by recover-incident (docs/recovery.md).", u.Incident.IncidentID)
		}
	case len(s.Holders) == 0 && len(s.Reservations) > 0 && lockstate.FreeSlots(s, q.cfg) <= 0:
		cooling := 0
		for _, r := range s.Reservations {
			if r.State == lockstate.ReservationQuarantine {
				quarantines = append(quarantines, r)
			} else {
				cooling++
			}
		}
		fmt.Fprintf(&b, "Every seat of %s (%d) is held by a reservation, not a job: %d quarantine(s) and %d cooldown(s).",
			q.s.Target.Lock, q.cfg.MaxHolders, len(quarantines), cooling)
		if t, ok := lockstate.NextCooldownExpiry(s, q.now()); ok {
			fmt.Fprintf(&b, " The next cooldown ends at %s by itself.", lockstate.FormatTime(t))
		}
	default:
		return ""
	}
	if len(quarantines) > 0 {
		b.WriteString(" A quarantine never ends by itself: a job on its runner reclaims it, or an operator who has checked in the Unity portal that the seat's activation was returned recovers it:")
		for _, r := range quarantines {
			fmt.Fprintf(&b, " %s (runner %s, %s, %s);",
				lockview.RecoverQuarantineCommand(r.ReservationID, q.s.Target.Repository()), r.RunnerID, r.Reason, r.RunURL)
		}
		b.WriteString(" see docs/recovery.md.")
	}
	return b.String()
}
