package lockview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// Formats accepted by Render.
const (
	// FormatTable is a plain-text report for a terminal.
	FormatTable = "table"
	// FormatJSON is the View as one indented JSON document.
	FormatJSON = "json"
	// FormatMarkdown is GitHub-flavored Markdown with a Mermaid timeline.
	FormatMarkdown = "markdown"
)

// Render writes v in format (FormatTable, FormatJSON or FormatMarkdown).
func Render(w io.Writer, v View, format string) error {
	switch format {
	case FormatTable:
		return RenderTable(w, v)
	case FormatJSON:
		return RenderJSON(w, v)
	case FormatMarkdown:
		return RenderMarkdown(w, v)
	default:
		return fmt.Errorf("lockview: unknown format %q: expected table, json or markdown", format)
	}
}

// RenderJSON writes v as indented JSON with a trailing newline.
func RenderJSON(w io.Writer, v View) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// RenderTable writes v as an aligned plain-text report. Untrusted text is
// reduced to one printable line per cell.
func RenderTable(w io.Writer, v View) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Lock %s", plain(v.Lock))
	if v.Repository != "" {
		fmt.Fprintf(&b, " in %s", plain(v.Repository))
	}
	if v.Branch != "" {
		fmt.Fprintf(&b, " (branch %s)", plain(v.Branch))
	}
	fmt.Fprintf(&b, ", schema %d, state updated %s, as of %s\n", v.SchemaVersion, orDash(plain(v.UpdatedAt)), v.GeneratedAt)
	fmt.Fprintf(&b, "Seats: %s\n", seatLine(v.Seats))
	seats := seatMode(v)
	renderSeatTable(&b, v)

	b.WriteString("\nHOLDERS\n")
	if len(v.Holders) == 0 {
		b.WriteString("  none\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		if seats {
			fmt.Fprintln(tw, "  SEAT\tLABELS\tCLASS\tREPOSITORY\tRUN\tJOB\tRUNNER\tAGE\tLEASE LEFT\tFENCING TOKEN\tRUN URL")
		} else {
			fmt.Fprintln(tw, "  SEAT\tREPOSITORY\tRUN\tJOB\tRUNNER\tAGE\tLEASE LEFT\tFENCING TOKEN\tRUN URL")
		}
		for _, h := range v.Holders {
			seat := plain(seatCell(h))
			if seats {
				seat += "\t" + plain(labelsText(h.Labels)) + "\t" + fmt.Sprint(h.Priority)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", seat, plain(h.Repository), runLabel(h.RunID, h.RunAttempt),
				orDash(plain(h.Job)), orDash(plain(h.RunnerID)), age(h.AgeSeconds), leaseLeft(h.LeaseLeftSeconds),
				orDash(plain(h.FencingToken)), orDash(plain(h.RunURL)))
		}
		_ = tw.Flush()
	}

	b.WriteString("\nQUEUE\n")
	if len(v.Queue) == 0 {
		b.WriteString("  empty\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		if seats {
			fmt.Fprintln(tw, "  POS\tLABELS\tCLASS\tPASSED\tREPOSITORY\tRUN\tJOB\tRUNNER\tWAITING\tRUN URL")
		} else {
			fmt.Fprintln(tw, "  POS\tREPOSITORY\tRUN\tJOB\tRUNNER\tWAITING\tRUN URL")
		}
		for _, q := range v.Queue {
			pos := fmt.Sprint(q.Position)
			if seats {
				pos += fmt.Sprintf("\t%s\t%d\t%d", plain(labelsText(q.Labels)), q.Priority, q.Overtakes)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", pos, plain(q.Repository), runLabel(q.RunID, q.RunAttempt),
				orDash(plain(q.Job)), orDash(plain(q.RunnerID)), age(q.WaitSeconds), orDash(plain(q.RunURL)))
		}
		_ = tw.Flush()
	}

	b.WriteString("\nRESERVATIONS\n")
	if len(v.Reservations) == 0 {
		b.WriteString("  none\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		if seats {
			fmt.Fprintln(tw, "  STATE\tSEAT\tRUNNER\tAGE\tTIME LEFT\tRESERVATION\tREASON")
		} else {
			fmt.Fprintln(tw, "  STATE\tRUNNER\tAGE\tTIME LEFT\tRESERVATION\tREASON")
		}
		for _, r := range v.Reservations {
			state := plain(r.State)
			if seats {
				state += "\t" + orDash(plain(r.SeatName))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", state, orDash(plain(r.RunnerID)), age(r.AgeSeconds),
				timeLeft(r), plain(r.ReservationID), orDash(plain(r.Reason)))
		}
		_ = tw.Flush()
		for _, r := range v.Reservations {
			if r.RecoveryCommand != "" {
				fmt.Fprintf(&b, "  Recover quarantine %s after confirming the seat's cleanup:\n    %s\n", plain(r.ReservationID), r.RecoveryCommand)
			}
		}
	}

	b.WriteString("\nINCIDENT\n")
	if v.Incident == nil {
		b.WriteString("  none\n")
	} else {
		i := v.Incident
		fmt.Fprintf(&b, "  %s (%s) reported %s (%s ago) by %s run %s job %s on runner %s\n", plain(i.IncidentID), plain(i.Reason),
			plain(i.ReportedAt), age(i.AgeSeconds), plain(i.Repository), runLabel(i.RunID, i.RunAttempt), plain(i.Job), plain(i.RunnerID))
		fmt.Fprintf(&b, "  Run: %s\n", plain(i.RunURL))
		b.WriteString("  Every acquire fails until it is recovered. After reconciling the Unity portal inventory, run:\n")
		fmt.Fprintf(&b, "    %s\n", i.RecoveryCommand)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// RenderMarkdown writes v as GitHub-flavored Markdown: a summary line, the
// Mermaid occupancy timeline, and tables. Suitable for $GITHUB_STEP_SUMMARY
// or an issue body.
func RenderMarkdown(w io.Writer, v View) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### Build lock %s\n\n", markdown.Code(v.Lock))
	fmt.Fprintf(&b, "**%s**", seatLine(v.Seats)) // trusted: numbers only
	fmt.Fprintf(&b, " · schema %d · state updated %s · as of %s", v.SchemaVersion, markdown.Text(orDash(v.UpdatedAt)), v.GeneratedAt)
	if v.Repository != "" {
		fmt.Fprintf(&b, " · %s", markdown.Code(v.Repository))
		if v.Branch != "" {
			fmt.Fprintf(&b, "@%s", markdown.Code(v.Branch))
		}
	}
	b.WriteString("\n\n")

	if v.Incident != nil {
		i := v.Incident
		b.WriteString("> [!CAUTION]\n")
		fmt.Fprintf(&b, "> Account incident %s (%s) blocks every admission since %s. After reconciling the Unity portal inventory, recover it with:\n",
			markdown.Code(i.IncidentID), markdown.Code(i.Reason), markdown.Text(i.ReportedAt))
		b.WriteString(">\n> ```sh\n")
		fmt.Fprintf(&b, "> %s\n", i.RecoveryCommand)
		b.WriteString("> ```\n\n")
	}

	if g := Gantt(v); g != "" {
		b.WriteString("```mermaid\n")
		b.WriteString(g)
		b.WriteString("```\n\n")
	} else {
		b.WriteString("_No seat is occupied and nobody is waiting._\n\n")
	}

	seats := seatMode(v)
	renderSeatMarkdown(&b, v)

	b.WriteString("#### Holders\n\n")
	if len(v.Holders) == 0 {
		b.WriteString("None.\n\n")
	} else {
		if seats {
			b.WriteString("| Seat | Labels | Class | Run | Job | Runner | Age | Lease left | Fencing token |\n|---|---|---:|---|---|---|---:|---:|---|\n")
		} else {
			b.WriteString("| Seat | Run | Job | Runner | Age | Lease left | Fencing token |\n|---:|---|---|---|---:|---:|---|\n")
		}
		for _, h := range v.Holders {
			seat := fmt.Sprint(h.Seat)
			if seats {
				seat = fmt.Sprintf("%s | %s | %d", markdown.Code(seatCell(h)), markdown.CodeCell(labelsText(h.Labels)), h.Priority)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", seat, runLink(h.Repository, h.RunID, h.RunAttempt, h.RunURL),
				markdown.Cell(h.Job), markdown.CodeCell(h.RunnerID), age(h.AgeSeconds), leaseLeft(h.LeaseLeftSeconds), markdown.CodeCell(h.FencingToken))
		}
		b.WriteString("\n")
	}

	b.WriteString("#### Queue\n\n")
	if len(v.Queue) == 0 {
		b.WriteString("Empty.\n\n")
	} else {
		if seats {
			b.WriteString("| Position | Labels | Class | Passed | Run | Job | Runner | Waiting |\n|---:|---|---:|---:|---|---|---|---:|\n")
		} else {
			b.WriteString("| Position | Run | Job | Runner | Waiting |\n|---:|---|---|---|---:|\n")
		}
		for _, q := range v.Queue {
			pos := fmt.Sprint(q.Position)
			if seats {
				pos += fmt.Sprintf(" | %s | %d | %d", markdown.CodeCell(labelsText(q.Labels)), q.Priority, q.Overtakes)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", pos, runLink(q.Repository, q.RunID, q.RunAttempt, q.RunURL),
				markdown.Cell(q.Job), markdown.CodeCell(q.RunnerID), age(q.WaitSeconds))
		}
		b.WriteString("\n")
	}

	b.WriteString("#### Reservations\n\n")
	if len(v.Reservations) == 0 {
		b.WriteString("None.\n")
	} else {
		if seats {
			b.WriteString("| State | Seat | Runner | Age | Time left | Reservation | Reason |\n|---|---|---|---:|---:|---|---|\n")
		} else {
			b.WriteString("| State | Runner | Age | Time left | Reservation | Reason |\n|---|---|---:|---:|---|---|\n")
		}
		for _, r := range v.Reservations {
			state := markdown.Cell(r.State)
			if seats {
				state += " | " + markdown.CodeCell(r.SeatName)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", state, markdown.CodeCell(r.RunnerID), age(r.AgeSeconds), timeLeft(r),
				markdown.CodeCell(r.ReservationID), markdown.Cell(r.Reason))
		}
		for _, r := range v.Reservations {
			if r.RecoveryCommand != "" {
				fmt.Fprintf(&b, "\nRecover quarantine %s after confirming the seat's cleanup:\n\n```sh\n%s\n```\n", markdown.Code(r.ReservationID), r.RecoveryCommand)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Gantt returns the Mermaid gantt source (without the code fence) of seat
// occupancy: one section per seat with its holder (held time, then the rest
// of the lease, or the time past it) or reservation (cooldown until it
// ends, quarantine until now), a Queue section with each wait, and the
// incident as a milestone. It returns "" when there is nothing to draw.
func Gantt(v View) string {
	now := v.now
	if now.IsZero() {
		now, _ = time.Parse(time.RFC3339, v.GeneratedAt)
	}
	var tasks bytes.Buffer
	n := 0
	task := func(label, tags, id string, start, end time.Time) {
		if !end.After(start) {
			end = start.Add(time.Second)
		}
		if tags != "" {
			tags += ", "
		}
		fmt.Fprintf(&tasks, "    %s :%s%s, %s, %s\n", mermaidLabel(label), tags, id, ganttTime(start), ganttTime(end))
		n++
	}
	seat := 0
	section := func(name string) {
		seat++
		switch {
		case name != "":
			fmt.Fprintf(&tasks, "  section Seat %s\n", mermaidLabel(name))
		case v.Seats.Max > 0 && seat > v.Seats.Max:
			fmt.Fprintf(&tasks, "  section Seat %d over capacity\n", seat)
		default:
			fmt.Fprintf(&tasks, "  section Seat %d\n", seat)
		}
	}
	for i, h := range v.Holders {
		acq, ok := parse(h.AcquiredAt)
		if !ok {
			continue
		}
		section(h.SeatName)
		id := fmt.Sprintf("h%d", i+1)
		label := fmt.Sprintf("%s run %s %s", h.Repository, h.RunID, h.Job)
		exp, hasExp := parse(h.ExpiresAt)
		switch {
		case hasExp && exp.Before(now):
			task(label, "active", id, acq, exp)
			task("past lease "+h.RunnerID, "crit", id+"x", exp, now)
		default:
			task(label, "active", id, acq, now)
			if hasExp && exp.After(now) {
				task("lease left "+h.RunnerID, "", id+"l", now, exp)
			}
		}
	}
	for i, r := range v.Reservations {
		created, ok := parse(r.CreatedAt)
		if !ok || r.Expired {
			continue
		}
		section(r.SeatName)
		id := fmt.Sprintf("r%d", i+1)
		if r.State == "quarantine" {
			task("quarantine "+r.RunnerID, "crit", id, created, now)
			continue
		}
		end, ok := parse(r.AvailableAt)
		if !ok {
			end = now
		}
		task("cooldown "+r.RunnerID, "done", id, created, end)
	}
	if len(v.Queue) > 0 {
		tasks.WriteString("  section Queue\n")
		for i, q := range v.Queue {
			t, ok := parse(q.QueuedAt)
			if !ok {
				continue
			}
			task(fmt.Sprintf("%d. %s run %s %s", q.Position, q.Repository, q.RunID, q.Job), "", fmt.Sprintf("q%d", i+1), t, now)
		}
	}
	if v.Incident != nil {
		if t, ok := parse(v.Incident.ReportedAt); ok {
			tasks.WriteString("  section Incident\n")
			fmt.Fprintf(&tasks, "    %s :milestone, crit, inc, %s, 1m\n", mermaidLabel("incident "+v.Incident.IncidentID), ganttTime(t))
			n++
		}
	}
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("gantt\n")
	fmt.Fprintf(&b, "  title Seat occupancy of %s (%s) at %s UTC\n", mermaidLabel(v.Lock), plural(v.Seats.Max, "seat"), ganttTime(now))
	b.WriteString("  dateFormat YYYY-MM-DD HH:mm:ss\n")
	b.WriteString("  axisFormat %H:%M\n")
	b.WriteString("  todayMarker off\n")
	b.Write(tasks.Bytes())
	return b.String()
}

func ganttTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// mermaidLabel keeps letters, digits, space and . _ / ( ) - and replaces
// everything else (notably : # ; which are Mermaid gantt syntax) with a
// hyphen, bounded to 80 characters.
func mermaidLabel(s string) string {
	var b strings.Builder
	count := 0
	for _, r := range oneLine(s) {
		if count == 80 {
			b.WriteString("...")
			break
		}
		switch {
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)), r == ' ', r == '.', r == '_', r == '/', r == '(', r == ')', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
		count++
	}
	out := strings.TrimSpace(b.String())
	if out == "" {
		return "-"
	}
	return out
}

// runLink renders "repo run N (attempt A)" linked to the run when the URL
// is http(s).
func runLink(repository, runID, attempt, runURL string) string {
	text := repository + " run " + runID
	if attempt != "" && attempt != "1" {
		text += " attempt " + attempt
	}
	return markdown.Link(text, runURL)
}

// plain reduces untrusted text to one printable line for the terminal.
func plain(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsPrint(r) {
			r = ' '
		}
		b.WriteRune(r)
	}
	return oneLine(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runLabel(runID, attempt string) string {
	out := plain(runID)
	if attempt != "" && attempt != "1" {
		out += "/" + plain(attempt)
	}
	return orDash(out)
}

func seatLine(s Seats) string {
	occupied := s.Holders + s.Reservations
	line := fmt.Sprintf("%d of %d seats occupied (%s, %s), %d free, %d queued", occupied, s.Max,
		plural(s.Holders, "holder"), plural(s.Reservations, "reservation"), max(s.Free, 0), s.Queued)
	if s.Free < 0 {
		line += fmt.Sprintf(", over capacity by %d", -s.Free)
	}
	if s.Draining > 0 {
		line += fmt.Sprintf(", %s draining (removed from the config)", plural(s.Draining, "seat"))
	}
	return line
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func age(sec *int64) string {
	if sec == nil {
		return "-"
	}
	return Duration(time.Duration(*sec) * time.Second)
}

func leaseLeft(sec *int64) string {
	if sec == nil {
		return "-"
	}
	if *sec < 0 {
		return "expired " + Duration(time.Duration(-*sec)*time.Second) + " ago"
	}
	return Duration(time.Duration(*sec) * time.Second)
}

func timeLeft(r ReservationView) string {
	switch {
	case r.State == "quarantine":
		return "until recovered"
	case r.Expired:
		return "expired"
	case r.TimeLeftSeconds == nil:
		return "-"
	default:
		return Duration(time.Duration(*r.TimeLeftSeconds) * time.Second)
	}
}

// Duration renders d compactly in whole seconds: "45s", "3m05s", "2h07m",
// "3d04h". Negative durations render as their magnitude.
func Duration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	default:
		return fmt.Sprintf("%dd%02dh", s/86400, (s%86400)/3600)
	}
}
