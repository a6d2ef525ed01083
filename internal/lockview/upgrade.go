package lockview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Clients an entry was written by, as far as its fields tell.
const (
	// ClientSuite: the entry carries the runner fields (runnerName,
	// runnerOs, runnerArch) only this suite records.
	ClientSuite = "this suite"
	// ClientSuiteAware: a schema-2 entry that recorded pendingRunnerId, so
	// its job runs this suite and knows the pending upgrade.
	ClientSuiteAware = "this suite (waiting for the upgrade)"
	// ClientOther: no field of this suite. The JavaScript reference and
	// builds before the runner fields write such entries, and every
	// rewrite by one of them drops this suite's fields from all entries.
	ClientOther = "the reference or an older build (or its fields were dropped by one's rewrite)"
)

// ClientOf says which client wrote e, as far as its fields tell.
func ClientOf(e lockstate.Entry) string {
	switch {
	case e.PendingRunnerID != "":
		return ClientSuiteAware
	case e.RunnerName != "":
		return ClientSuite
	}
	return ClientOther
}

// UpgradeEntry is one holder or queued job of an UpgradeView.
type UpgradeEntry struct {
	HolderID string `json:"holderId"`
	RunURL   string `json:"runUrl"`
	RunnerID string `json:"runnerId,omitempty"`
	Client   string `json:"client"`
	// Blocks is true for a holder, and for a queued job that the step to
	// runner serialization cannot carry yet (no runner id recorded).
	Blocks bool `json:"blocks"`
}

// UpgradeBlocker is one reservation or the incident that must end first.
type UpgradeBlocker struct {
	Kind    string `json:"kind"` // cooldown, quarantine or incident
	ID      string `json:"id"`
	Runner  string `json:"runnerId,omitempty"`
	EndsAt  string `json:"endsAt,omitempty"`
	Command string `json:"command,omitempty"`
	Note    string `json:"note"`
}

// UpgradeView is what `buildlock upgrade` shows about one lock.
type UpgradeView struct {
	Lock       string           `json:"lock"`
	Repository string           `json:"repository,omitempty"`
	From       int              `json:"schema"`
	To         int              `json:"configAsks"`
	Features   string           `json:"features,omitempty"`
	Status     string           `json:"status"` // none, draining, ready
	Summary    string           `json:"summary"`
	Holders    []UpgradeEntry   `json:"holders"`
	Waiting    []UpgradeEntry   `json:"waiting"`
	Blockers   []UpgradeBlocker `json:"blockers"`
	// OtherClients counts holders and waiters without this suite's fields:
	// reference clients do not pause for an upgrade (docs/upgrading.md).
	OtherClients int      `json:"otherClients"`
	Advice       []string `json:"advice"`
}

// Upgrade statuses.
const (
	UpgradeNone     = "none"
	UpgradeDraining = "draining"
	UpgradeReady    = "ready"
)

// BuildUpgrade describes the pending upgrade of s under cfg at now.
func BuildUpgrade(s *lockstate.State, cfg lockstate.Config, repository string, now time.Time) UpgradeView {
	u := lockstate.PlanUpgrade(s, cfg, now)
	v := UpgradeView{Lock: s.Lock, Repository: repository, From: s.SchemaVersion, To: max(u.To, s.SchemaVersion),
		Features: u.Features(), Status: UpgradeNone, Summary: u.Summary(), Holders: []UpgradeEntry{}, Waiting: []UpgradeEntry{}, Blockers: []UpgradeBlocker{}, Advice: []string{}}
	switch {
	case u.Ready():
		v.Status = UpgradeReady
	case u.Pending():
		v.Status = UpgradeDraining
	}
	unready := map[string]bool{}
	for _, id := range u.Unready {
		unready[id] = true
	}
	for _, h := range s.Holders {
		e := UpgradeEntry{HolderID: oneLine(h.HolderID), RunURL: markdown.HTTPURL(h.RunURL), RunnerID: oneLine(h.RunnerID), Client: ClientOf(h.Entry), Blocks: u.Pending()}
		v.Holders = append(v.Holders, e)
		if e.Client == ClientOther {
			v.OtherClients++
		}
	}
	for _, q := range s.Queue {
		e := UpgradeEntry{HolderID: oneLine(q.HolderID), RunURL: markdown.HTTPURL(q.RunURL), RunnerID: oneLine(q.RunnerID), Client: ClientOf(q), Blocks: unready[q.HolderID]}
		v.Waiting = append(v.Waiting, e)
		if e.Client == ClientOther {
			v.OtherClients++
		}
	}
	for _, r := range u.Reservations {
		b := UpgradeBlocker{Kind: r.State, ID: oneLine(r.ReservationID), Runner: oneLine(r.RunnerID)}
		if r.State == lockstate.ReservationCooldown {
			b.EndsAt, b.Note = r.AvailableAt, "ends by itself"
		} else {
			b.Command = RecoverQuarantineCommand(b.ID, repository)
			b.Note = "never ends by itself: a job on runner " + b.Runner + " reclaims it, or an operator recovers it after checking in the Unity portal that the seat's activation was returned"
		}
		v.Blockers = append(v.Blockers, b)
	}
	if u.Incident != nil {
		v.Blockers = append(v.Blockers, UpgradeBlocker{Kind: "incident", ID: u.Incident.IncidentID, Runner: oneLine(u.Incident.RunnerID),
			Command: RecoverIncidentCommand(u.Incident.IncidentID, repository), Note: "blocks every admission until recovered"})
	}
	if u.Pending() && v.OtherClients > 0 {
		v.Advice = append(v.Advice, fmt.Sprintf("%d holder(s) or waiter(s) carry no field of this suite. Clients of the reference (and builds before upgrades drained) do not pause: "+
			"they fail with drain-required on steps 2-5 and keep admitting at schema 5 when the config asks for fencedAdmission, which can keep the lock from ever draining. "+
			"Pause them as docs/runbook.md \"Finishing an upgrade\" says.", v.OtherClients))
	}
	if q := u.Quarantines(); len(q) > 0 {
		v.Advice = append(v.Advice, "A quarantine blocks the upgrade until it ends: run the recover command shown beside it once the Unity portal shows the seat returned.")
	}
	if v.Status == UpgradeReady {
		v.Advice = append(v.Advice, "Nothing is left to drain: the next acquire or release of this suite writes the upgrade.")
	}
	return v
}

// RenderUpgrade writes v as a terminal report ("table") or JSON.
func RenderUpgrade(w io.Writer, v UpgradeView, format string) error {
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if format != FormatTable {
		return fmt.Errorf("lockview: unknown upgrade format %q (table or json)", format)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Lock %s: schema %d", plain(v.Lock), v.From)
	switch v.Status {
	case UpgradeNone:
		fmt.Fprintf(&b, "; the config asks for nothing more. No upgrade is pending.\n")
	case UpgradeReady:
		fmt.Fprintf(&b, "; the config asks for schema %d (%s). Ready: %s.\n", v.To, v.Features, v.Summary)
	default:
		fmt.Fprintf(&b, "; the config asks for schema %d (%s). Draining: admission is paused until nothing is left to drain.\n", v.To, v.Features)
		fmt.Fprintf(&b, "Waiting for: %s.\n", v.Summary)
	}
	fmt.Fprintf(&b, "\nHolders (%d):\n", len(v.Holders))
	for _, e := range v.Holders {
		fmt.Fprintf(&b, "  %s on %s  [%s]  %s\n", plain(e.HolderID), orDash(plain(e.RunnerID)), e.Client, plain(e.RunURL))
	}
	fmt.Fprintf(&b, "\nWaiting, in order (%d; carried across the upgrade):\n", len(v.Waiting))
	for i, e := range v.Waiting {
		mark := ""
		if e.Blocks {
			mark = "  <- no runner id recorded yet: it records one on its next poll, or leaves"
		}
		fmt.Fprintf(&b, "  %d. %s  [%s]%s\n", i+1, plain(e.HolderID), e.Client, mark)
	}
	if len(v.Blockers) > 0 {
		b.WriteString("\nAlso blocking:\n")
		for _, x := range v.Blockers {
			fmt.Fprintf(&b, "  %s %s on %s", x.Kind, plain(x.ID), orDash(plain(x.Runner)))
			if x.EndsAt != "" {
				fmt.Fprintf(&b, " until %s", plain(x.EndsAt))
			}
			fmt.Fprintf(&b, ": %s\n", x.Note)
			if x.Command != "" {
				fmt.Fprintf(&b, "    %s\n", x.Command)
			}
		}
	}
	for _, a := range v.Advice {
		fmt.Fprintf(&b, "\n%s\n", a)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
