package lockview

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Seat states of a SeatRow (named seats, issue 25).
const (
	// SeatHeld: a holder records the seat.
	SeatHeld = "held"
	// SeatReserved: a live cooldown keeps the seat out of service until
	// its availableAt.
	SeatReserved = "reserved"
	// SeatQuarantined: a quarantine keeps the seat out of service until an
	// operator recovers it; the lock's other seats are not affected.
	SeatQuarantined = "quarantined"
	// SeatFree: configured, and no holder or live reservation records it.
	SeatFree = "free"
	// SeatDraining: removed from the config but still held or reserved; no
	// new holder is admitted to it, and it leaves the table once released.
	SeatDraining = "draining"
)

// SeatRow is one named seat: what the config says about it and who
// occupies it now.
type SeatRow struct {
	// Name is the seat's name (what acquire outputs as seat).
	Name string `json:"name"`
	// Labels are the seat's labels in the config (nil when draining).
	Labels []string `json:"labels"`
	// State is SeatHeld, SeatReserved, SeatQuarantined, SeatFree or
	// SeatDraining.
	State string `json:"state"`
	// HolderID is the holder on the seat, or the holder the reservation
	// on it belonged to.
	HolderID string `json:"holderId,omitempty"`
	// RunURL is that holder's run.
	RunURL string `json:"runUrl,omitempty"`
	// RunnerID is that holder's runner.
	RunnerID string `json:"runnerId,omitempty"`
	// ReservationID is the reservation on the seat.
	ReservationID string `json:"reservationId,omitempty"`
	// LastRunner and LastUsedAt are the seat's affinity record: the runner
	// of its last holder (a job on that runner prefers this seat) and when
	// that holder was admitted.
	LastRunner string `json:"lastRunner,omitempty"`
	LastUsedAt string `json:"lastUsedAt,omitempty"`
}

// seatTable returns the seat rows of s: the config's seats in config
// order, then the seats holders or reservations record that the config no
// longer names (draining). It is nil when the config names no seats and
// nothing records one. An expired cooldown frees its seat, as in
// Seats.Free.
func seatTable(s *lockstate.State, cfg lockstate.Config, now func(string) bool) []SeatRow {
	type occupant struct {
		row   SeatRow
		found bool
	}
	occ := map[string]*occupant{}
	var order []string
	note := func(seat string, row SeatRow) {
		if seat == "" {
			return
		}
		if _, ok := occ[seat]; !ok {
			order = append(order, seat)
		}
		occ[seat] = &occupant{row: row, found: true}
	}
	for _, h := range s.Holders {
		note(h.Seat, SeatRow{State: SeatHeld, HolderID: h.HolderID, RunURL: h.RunURL, RunnerID: h.RunnerID})
	}
	for _, r := range s.Reservations {
		state := SeatQuarantined
		if r.State == lockstate.ReservationCooldown {
			if now(r.AvailableAt) {
				continue // expired: the next write prunes it
			}
			state = SeatReserved
		}
		note(r.Seat, SeatRow{State: state, HolderID: r.HolderID, RunURL: r.RunURL, RunnerID: r.RunnerID, ReservationID: r.ReservationID})
	}
	seats := cfg.Seats.List()
	if len(seats) == 0 && len(order) == 0 {
		return nil
	}
	use := map[string]lockstate.SeatUse{}
	for _, u := range s.Seats {
		use[u.Name] = u
	}
	rows := make([]SeatRow, 0, len(seats)+len(order))
	configured := map[string]bool{}
	add := func(name string, labels []string, draining bool) {
		row := SeatRow{State: SeatFree}
		if o, ok := occ[name]; ok {
			row = o.row
		}
		if draining {
			row.State = SeatDraining
		}
		row.Name, row.Labels = name, labels
		row.LastRunner, row.LastUsedAt = use[name].LastRunner, use[name].LastUsedAt
		rows = append(rows, row)
	}
	for _, sc := range seats {
		configured[sc.Name] = true
		add(sc.Name, sc.Labels, false)
	}
	for _, name := range order {
		if !configured[name] {
			add(name, nil, true)
		}
	}
	return rows
}

// seatMode reports whether v carries issue-25 seat data (named seats,
// labels or classes): the tables then show the seat, labels and class
// columns.
func seatMode(v View) bool {
	if len(v.SeatTable) > 0 {
		return true
	}
	for _, h := range v.Holders {
		if h.SeatName != "" || len(h.Labels) > 0 || h.Priority != 0 {
			return true
		}
	}
	for _, q := range v.Queue {
		if len(q.Labels) > 0 || q.Priority != 0 {
			return true
		}
	}
	return false
}

// labelsText renders a label set ("any" when empty).
func labelsText(labels []string) string {
	if len(labels) == 0 {
		return "any"
	}
	return strings.Join(labels, ",")
}

// seatCell is a holder's seat: its name when named, else its position.
func seatCell(h HolderView) string {
	if h.SeatName != "" {
		return h.SeatName
	}
	return fmt.Sprint(h.Seat)
}

// occupantText says who is on a seat row, for the table and Markdown.
func occupantText(r SeatRow) string {
	switch {
	case r.ReservationID != "":
		return r.ReservationID + " (" + r.HolderID + ")"
	default:
		return r.HolderID
	}
}

// renderSeatTable writes the SEATS section of the plain-text report.
func renderSeatTable(b *bytes.Buffer, v View) {
	if len(v.SeatTable) == 0 {
		return
	}
	b.WriteString("\nSEATS\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SEAT\tLABELS\tSTATE\tBY\tRUNNER\tLAST RUNNER\tLAST USED")
	for _, r := range v.SeatTable {
		labels := labelsText(r.Labels)
		if r.State == SeatDraining {
			labels = "(removed)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", plain(r.Name), plain(labels), r.State, orDash(plain(occupantText(r))),
			orDash(plain(r.RunnerID)), orDash(plain(r.LastRunner)), orDash(plain(r.LastUsedAt)))
	}
	_ = tw.Flush()
}

// renderSeatMarkdown writes the Seats section of the Markdown report.
func renderSeatMarkdown(b *bytes.Buffer, v View) {
	if len(v.SeatTable) == 0 {
		return
	}
	b.WriteString("#### Seats\n\n")
	b.WriteString("| Seat | Labels | State | By | Runner | Last runner | Last used |\n|---|---|---|---|---|---|---|\n")
	for _, r := range v.SeatTable {
		labels := markdown.CodeCell(labelsText(r.Labels))
		if r.State == SeatDraining {
			labels = "removed from the config"
		}
		by := ""
		switch {
		case r.ReservationID != "":
			by = markdown.CodeCell(r.ReservationID)
		case r.HolderID != "":
			by = markdown.Link(r.HolderID, r.RunURL)
		}
		if by == "" {
			by = "—"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", markdown.CodeCell(r.Name), labels, r.State, by,
			markdown.CodeCell(r.RunnerID), markdown.CodeCell(r.LastRunner), markdown.Cell(r.LastUsedAt))
	}
	b.WriteString("\n")
}
