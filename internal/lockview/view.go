// Package lockview turns a decoded lock state into an operator's view of it
// — who holds which seat, for how long, who waits, what is reserved, what
// incident blocks admission and the exact command that recovers it — and
// renders that view as a terminal table, JSON, or Markdown with a Mermaid
// gantt timeline of seat occupancy (for a job summary or an issue).
//
// The package is pure: no I/O beyond the io.Writer it is handed, no clock
// (now is part of Options), no environment. The same state and options
// always render the same bytes, which is what the golden tests pin.
//
// Every string that came from lock state is treated as untrusted text:
// Markdown output escapes it ([markdown.Text]), Mermaid labels are reduced
// to a safe alphabet, and links are emitted only for http(s) URLs.
package lockview

import (
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// RecoverWorkflow is the operator recovery workflow of the lock repository
// (spec §4.6, "Recover build lock").
const RecoverWorkflow = "recover-build-lock.yml"

// RecoverIncidentCommand returns the exact gh command that recovers the
// schema-5 account incident id (spec §4.4). Run it only after the Unity
// portal inventory is reconciled: portal-cleanup-confirmed=true is the
// operator's proof. repository ("owner/name"), when set, is passed as
// --repo so the command works from any directory.
func RecoverIncidentCommand(incidentID, repository string) string {
	return "gh workflow run " + RecoverWorkflow + repoFlag(repository) +
		" -f operation=recover-incident -f incident-id=" + incidentID + " -f portal-cleanup-confirmed=true"
}

// RecoverQuarantineCommand returns the gh command that converts quarantine
// reservationID to a cooldown (spec §4.3), after the operator confirmed the
// seat's cleanup (resource-safe=true).
func RecoverQuarantineCommand(reservationID, repository string) string {
	return "gh workflow run " + RecoverWorkflow + repoFlag(repository) +
		" -f operation=recover -f reservation-id=" + reservationID + " -f resource-safe=true"
}

func repoFlag(repository string) string {
	if repository == "" {
		return ""
	}
	return " --repo " + repository
}

// FencingTokenFunc returns the fencing token recorded for a holder, or ""
// when the state carries none.
type FencingTokenFunc func(s *lockstate.State, holderID string) string

// HolderFencingToken is the default FencingTokenFunc: the holder's schema-6
// fencing token, or "" below schema 6 (no token).
func HolderFencingToken(s *lockstate.State, holderID string) string {
	if t := lockstate.FencingToken(s, holderID); t > 0 {
		return strconv.FormatInt(t, 10)
	}
	return ""
}

// Options parameterizes Build.
type Options struct {
	// Repository is the lock repository ("owner/name"), used in commands.
	Repository string
	// Branch is the state branch the state was read from.
	Branch string
	// Config is the lock's configuration (maxHolders).
	Config lockstate.Config
	// Now is the instant the view describes.
	Now time.Time
	// FencingToken reads a holder's fencing token; default
	// HolderFencingToken.
	FencingToken FencingTokenFunc
}

// View is the operator's view of one lock. Durations are whole seconds;
// timestamps are RFC 3339 strings exactly as stored (or as computed, in
// UTC). A duration whose timestamp could not be parsed is nil.
type View struct {
	Lock          string            `json:"lock"`
	Repository    string            `json:"repository,omitempty"`
	Branch        string            `json:"branch,omitempty"`
	SchemaVersion int               `json:"schemaVersion"`
	GeneratedAt   string            `json:"generatedAt"`
	UpdatedAt     string            `json:"updatedAt,omitempty"`
	Seats         Seats             `json:"seats"`
	Holders       []HolderView      `json:"holders"`
	Queue         []QueueView       `json:"queue"`
	Reservations  []ReservationView `json:"reservations"`
	Incident      *IncidentView     `json:"incident"`
	// SeatTable lists the named seats (issue 25) when the config names
	// seats or a holder or reservation records one; omitted otherwise.
	SeatTable []SeatRow `json:"seatTable,omitempty"`
	now       time.Time // the instant rendered as "now"
}

// Seats summarizes capacity.
type Seats struct {
	// Max is the configured maxHolders.
	Max int `json:"max"`
	// Holders and Reservations occupy seats.
	Holders      int `json:"holders"`
	Reservations int `json:"reservations"`
	// Free is Max - Holders - live Reservations (expired cooldowns are
	// pruned by the next write, so they do not count); negative when
	// maxHolders was lowered below the occupancy. With named seats it is
	// the free configured seats less the holders and live reservations
	// that record no seat (admitted before the config named its seats): a
	// draining seat (removed from the config, still occupied) is not
	// counted against the new list.
	Free int `json:"free"`
	// Draining counts the seats removed from the config that a holder or
	// a live reservation still records.
	Draining int `json:"draining,omitempty"`
	// Queued is the queue length.
	Queued int `json:"queued"`
}

// HolderView is one admitted holder.
type HolderView struct {
	Seat             int    `json:"seat"`
	HolderID         string `json:"holderId"`
	Repository       string `json:"repository"`
	Workflow         string `json:"workflow"`
	Job              string `json:"job"`
	RunID            string `json:"runId"`
	RunAttempt       string `json:"runAttempt"`
	RunURL           string `json:"runUrl"`
	RunnerID         string `json:"runnerId,omitempty"`
	JobID            string `json:"jobId,omitempty"`
	QueuedAt         string `json:"queuedAt"`
	AcquiredAt       string `json:"acquiredAt"`
	ExpiresAt        string `json:"expiresAt"`
	AgeSeconds       *int64 `json:"ageSeconds"`
	LeaseLeftSeconds *int64 `json:"leaseLeftSeconds"`
	FencingToken     string `json:"fencingToken,omitempty"`
	// SeatName is the named seat the holder records (issue 25; seat is
	// the holder's position in the list).
	SeatName string `json:"seatName,omitempty"`
	// Labels and Priority are the labels and priority class the holder
	// was admitted with (nil labels: any seat).
	Labels   []string `json:"labels,omitempty"`
	Priority int      `json:"priority"`
}

// QueueView is one queued request.
type QueueView struct {
	Position    int    `json:"position"`
	HolderID    string `json:"holderId"`
	Repository  string `json:"repository"`
	Workflow    string `json:"workflow"`
	Job         string `json:"job"`
	RunID       string `json:"runId"`
	RunAttempt  string `json:"runAttempt"`
	RunURL      string `json:"runUrl"`
	RunnerID    string `json:"runnerId,omitempty"`
	QueuedAt    string `json:"queuedAt"`
	WaitSeconds *int64 `json:"waitSeconds"`
	// Labels are the seat labels the waiter asked for (nil: any seat);
	// Priority is its class (0-9, higher admitted first); Overtakes is
	// how many later waiters were admitted past it (at most maxOvertakes).
	Labels    []string `json:"labels,omitempty"`
	Priority  int      `json:"priority"`
	Overtakes int      `json:"overtakes"`
}

// ReservationView is one cooldown or quarantine.
type ReservationView struct {
	ReservationID   string `json:"reservationId"`
	State           string `json:"state"`
	HolderID        string `json:"holderId"`
	Repository      string `json:"repository"`
	RunID           string `json:"runId"`
	RunURL          string `json:"runUrl"`
	RunnerID        string `json:"runnerId"`
	Reason          string `json:"reason"`
	CreatedAt       string `json:"createdAt"`
	AvailableAt     string `json:"availableAt,omitempty"`
	AgeSeconds      *int64 `json:"ageSeconds"`
	TimeLeftSeconds *int64 `json:"timeLeftSeconds,omitempty"`
	// Expired marks a cooldown whose availableAt has passed; the next
	// write prunes it and it no longer blocks admission.
	Expired bool `json:"expired,omitempty"`
	// RecoveryCommand is set for quarantines.
	RecoveryCommand string `json:"recoveryCommand,omitempty"`
	// SeatName is the named seat the reservation keeps out of service.
	SeatName string `json:"seatName,omitempty"`
}

// IncidentView is the active schema-5 account incident.
type IncidentView struct {
	IncidentID      string `json:"incidentId"`
	Repository      string `json:"repository"`
	Workflow        string `json:"workflow"`
	Job             string `json:"job"`
	RunID           string `json:"runId"`
	RunAttempt      string `json:"runAttempt"`
	RunURL          string `json:"runUrl"`
	RunnerID        string `json:"runnerId"`
	ReportedAt      string `json:"reportedAt"`
	Reason          string `json:"reason"`
	AgeSeconds      *int64 `json:"ageSeconds"`
	RecoveryCommand string `json:"recoveryCommand"`
}

// Build computes the view of s at opts.Now. s must come from
// lockstate.Decode (or a transition); Build never modifies it.
func Build(s *lockstate.State, opts Options) View {
	now := opts.Now.UTC().Truncate(time.Second)
	ft := opts.FencingToken
	if ft == nil {
		ft = HolderFencingToken
	}
	v := View{
		Lock:          s.Lock,
		Repository:    opts.Repository,
		Branch:        opts.Branch,
		SchemaVersion: s.SchemaVersion,
		GeneratedAt:   now.Format(time.RFC3339),
		UpdatedAt:     s.UpdatedAt,
		Holders:       []HolderView{},
		Queue:         []QueueView{},
		Reservations:  []ReservationView{},
		now:           now,
	}
	for i, h := range s.Holders {
		hv := HolderView{
			Seat: i + 1, HolderID: h.HolderID, Repository: h.Repository, Workflow: h.Workflow, Job: h.Job,
			RunID: h.RunID, RunAttempt: h.RunAttempt, RunURL: h.RunURL, RunnerID: h.RunnerID, JobID: h.JobID,
			QueuedAt: h.QueuedAt, AcquiredAt: h.AcquiredAt, ExpiresAt: h.ExpiresAt,
			FencingToken: ft(s, h.HolderID), SeatName: h.Seat, Labels: h.LabelList(), Priority: h.Priority,
		}
		if t, ok := lockstate.ParseTime(h.AcquiredAt); ok {
			hv.AgeSeconds = seconds(now.Sub(t))
		}
		if t, ok := lockstate.ParseTime(h.ExpiresAt); ok {
			hv.LeaseLeftSeconds = seconds(t.Sub(now))
		}
		v.Holders = append(v.Holders, hv)
	}
	for i, e := range s.Queue {
		qv := QueueView{
			Position: i + 1, HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job,
			RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: e.RunnerID, QueuedAt: e.QueuedAt,
			Labels: e.LabelList(), Priority: e.Priority, Overtakes: e.Overtakes,
		}
		if t, ok := lockstate.ParseTime(e.QueuedAt); ok {
			qv.WaitSeconds = seconds(now.Sub(t))
		}
		v.Queue = append(v.Queue, qv)
	}
	live := 0
	for _, r := range s.Reservations {
		rv := ReservationView{
			ReservationID: r.ReservationID, State: r.State, HolderID: r.HolderID, Repository: r.Repository,
			RunID: r.RunID, RunURL: r.RunURL, RunnerID: r.RunnerID, Reason: r.Reason, CreatedAt: r.CreatedAt,
			AvailableAt: r.AvailableAt, SeatName: r.Seat,
		}
		if t, ok := lockstate.ParseTime(r.CreatedAt); ok {
			rv.AgeSeconds = seconds(now.Sub(t))
		}
		switch r.State {
		case lockstate.ReservationCooldown:
			if t, ok := lockstate.ParseTime(r.AvailableAt); ok {
				left := t.Sub(now)
				rv.Expired = left <= 0
				rv.TimeLeftSeconds = seconds(max(left, 0))
			}
		case lockstate.ReservationQuarantine:
			rv.RecoveryCommand = RecoverQuarantineCommand(r.ReservationID, opts.Repository)
		}
		if !rv.Expired {
			live++
		}
		v.Reservations = append(v.Reservations, rv)
	}
	if inc := s.ActiveIncident; inc != nil {
		iv := &IncidentView{
			IncidentID: inc.IncidentID, Repository: inc.Repository, Workflow: inc.Workflow, Job: inc.Job,
			RunID: inc.RunID, RunAttempt: inc.RunAttempt, RunURL: inc.RunURL, RunnerID: inc.RunnerID,
			ReportedAt: inc.ReportedAt, Reason: inc.Reason,
			RecoveryCommand: RecoverIncidentCommand(inc.IncidentID, opts.Repository),
		}
		if t, ok := lockstate.ParseTime(inc.ReportedAt); ok {
			iv.AgeSeconds = seconds(now.Sub(t))
		}
		v.Incident = iv
	}
	v.Seats = Seats{
		Max:          opts.Config.MaxHolders,
		Holders:      len(s.Holders),
		Reservations: live,
		Free:         opts.Config.MaxHolders - len(s.Holders) - live,
		Queued:       len(s.Queue),
	}
	v.SeatTable = seatTable(s, opts.Config, func(availableAt string) bool {
		t, ok := lockstate.ParseTime(availableAt)
		return ok && !t.After(now)
	})
	if opts.Config.Seats.Len() > 0 {
		free, unassigned := 0, 0
		for _, r := range v.SeatTable {
			switch r.State {
			case SeatFree:
				free++
			case SeatDraining:
				v.Seats.Draining++
			}
		}
		for _, h := range v.Holders {
			if h.SeatName == "" {
				unassigned++
			}
		}
		for _, r := range v.Reservations {
			if r.SeatName == "" && !r.Expired {
				unassigned++
			}
		}
		v.Seats.Free = free - unassigned
	}
	return v
}

func seconds(d time.Duration) *int64 {
	n := int64(d / time.Second)
	return &n
}

// parse returns the time of a stored timestamp.
func parse(s string) (time.Time, bool) {
	t, ok := lockstate.ParseTime(s)
	return t.UTC(), ok
}

// oneLine collapses whitespace runs (including newlines) to one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
