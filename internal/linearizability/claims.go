package linearizability

import (
	"fmt"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// ClaimHolds returns why claim c is false of doc (whose blob SHA is sha), or
// "" when it is true. It is pure.
//
//   - acquired: the job holds a seat in doc (from schema 3 with its own run
//     attempt; at schema 6 with the reported token), and doc is the version
//     named by the reported state-sha when one was reported;
//   - released: no holder or queue entry the job owns is left;
//   - recovered: the named quarantine is no longer a quarantine, or the
//     named incident is no longer active.
func (r LockRules) ClaimHolds(c Claim, doc *lockstate.State, sha string) string {
	a := c.Actor
	switch c.Kind {
	case ClaimAcquired:
		if c.StateSHA != "" && c.StateSHA != sha {
			return fmt.Sprintf("state-sha %s is not this version (%s)", short(c.StateSHA), short(sha))
		}
		for _, h := range doc.Holders {
			if h.HolderID != a.HolderID {
				continue
			}
			if schemaOf(doc) >= 3 && h.RunAttempt != a.Attempt {
				return fmt.Sprintf("%s holds with attempt %s, not %s", esc(a.HolderID), esc(h.RunAttempt), esc(a.Attempt))
			}
			if schemaOf(doc) >= lockstate.FencedSchemaVersion && strconv.FormatInt(h.FencingToken, 10) != c.Token {
				return fmt.Sprintf("%s holds with fencing token %d, not %q", esc(a.HolderID), h.FencingToken, esc(c.Token))
			}
			return ""
		}
		return esc(a.HolderID) + " is not a holder"
	case ClaimReleased:
		j := &judge{r: r, st: Step{Actor: a}, next: doc}
		for _, h := range doc.Holders {
			if ok, _ := j.jobOwns(h.Entry); ok {
				return fmt.Sprintf("%s@%s still holds", esc(h.HolderID), esc(h.RunAttempt))
			}
		}
		for _, e := range doc.Queue {
			if ok, _ := j.jobOwns(e); ok {
				return fmt.Sprintf("%s@%s is still queued", esc(e.HolderID), esc(e.RunAttempt))
			}
		}
		return ""
	case ClaimRecovered:
		switch a.Kind {
		case ActorRecover:
			for _, q := range doc.Reservations {
				if q.ReservationID == a.Target && q.State == lockstate.ReservationQuarantine {
					return "quarantine " + esc(a.Target) + " is still a quarantine"
				}
			}
			return ""
		case ActorRecoverIncident:
			if doc.ActiveIncident != nil && doc.ActiveIncident.IncidentID == a.Target {
				return "incident " + esc(a.Target) + " is still active"
			}
			return ""
		}
	}
	return fmt.Sprintf("unknown claim %q by %s", c.Kind, esc(a.String()))
}
