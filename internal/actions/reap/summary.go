package reap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// summary renders every decision with its evidence as the job summary (or
// to stdout when the step has no summary file, as in a local run) and logs
// the headline.
func (r *reaper) summary() error {
	now := r.d.Clock.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "## Reap stale build locks: %s\n\n", markdown.Code(r.lock()))
	head := r.headline()
	fmt.Fprintf(&b, "%s\n\n", markdown.Message(head))
	st := r.latest.State
	if st != nil {
		fmt.Fprintf(&b, "State %s (schema %d) on %s branch %s: %d holder(s), %d queued, %d reservation(s)",
			markdown.Code(orDash(shortSHA(r.latest.SHA))), st.SchemaVersion, markdown.Code(r.lk.Target.Repository()), markdown.Code(r.lk.Target.Branch),
			len(st.Holders), len(st.Queue), len(st.Reservations))
		if st.ActiveIncident != nil {
			fmt.Fprintf(&b, ", active account incident %s", markdown.Code(st.ActiveIncident.IncidentID))
		}
		b.WriteString(".\n\n")
	}
	fmt.Fprintf(&b, "Started %s, finished %s; status-scan deadline %s, write deadline %s. Outputs: `reaped=%t`, %s.\n\n",
		lockstate.FormatTime(r.start), lockstate.FormatTime(now),
		lockstate.FormatTime(r.start.Add(ScanBudget)), lockstate.FormatTime(r.start.Add(TotalBudget)), r.reaped, markdown.Code("state-sha="+orDash(r.latest.SHA)))
	fmt.Fprintf(&b, "Request budget: %d of %d requests used (%d of the budget kept back from the status scan for checkpoint writes; %d refused). Every request counts: 304 revalidations, installation lookups and token mints included.\n\n",
		r.budget.Used(), r.budget.Limit(), WriteReserve(r.budget.Limit()), r.budget.Refused())
	if r.budgetStop {
		fmt.Fprintf(&b, "**%s**\n\n", markdown.Message(r.budgetWarning()))
	}
	if r.refusal != nil {
		fmt.Fprintf(&b, "**%s**\n\n", markdown.Message(r.refusal.Error()))
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "%s\n\n", markdown.Message(n))
	}
	if len(r.rows) > 0 {
		b.WriteString("| # | Kind | Entry | Run read | Job read | Timestamps | Verdict | Action |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		for i, rw := range r.rows {
			runRead, jobRead := "-", "-"
			if rw.obs != nil {
				runRead = fmt.Sprintf("%s (read %s)", rw.obs.RunNote, lockstate.FormatTime(rw.obs.Evidence.ObservedAt))
				jobRead = orDash(rw.obs.JobNote)
			}
			entry := markdown.Code(rw.id)
			if markdown.HTTPURL(rw.runURL) != "" {
				entry += " (" + markdown.Link("run", rw.runURL) + ")"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, markdown.Text(string(rw.kind)),
				entry, markdown.Message(runRead), markdown.Message(jobRead), markdown.Message(rw.times), markdown.Message(rw.verdict), markdown.Message(orDash(rw.action)))
		}
		b.WriteString("\n")
	}
	for _, err := range append(append([]error(nil), r.checkpointErr...), r.evidenceErrs...) {
		fmt.Fprintf(&b, "- %s\n", markdown.Message(err.Error()))
	}
	r.a.Notice(head)
	md := b.String()
	if err := r.a.Summary(md); err != nil {
		if errors.Is(err, actionio.ErrFileCommandUnavailable) {
			r.a.PrintLines(md)
			err = nil
		}
		return err
	}
	return nil
}

func (r *reaper) headline() string {
	applied, unchecked := 0, 0
	for _, rw := range r.rows {
		if rw.unchecked {
			unchecked++
		}
		if strings.HasPrefix(rw.action, "quarantined") || strings.HasPrefix(rw.action, "holder removed") ||
			strings.HasPrefix(rw.action, "quarantine removed") || strings.HasPrefix(rw.action, "converted") ||
			strings.HasPrefix(rw.action, "removed from the queue") || strings.HasPrefix(rw.action, "already applied") {
			applied++
		}
	}
	var parts []string
	switch {
	case r.refusal != nil:
		parts = append(parts, fmt.Sprintf("Refused to reap %s: the state document is over the reaper's size bounds (%s).", r.lock(), CodeStateTooLarge))
	case applied > 0:
		parts = append(parts, fmt.Sprintf("Reaped %d stale entr%s of %s in %d checkpoint commit(s).", applied, plural(applied, "y", "ies"), r.lock(), r.commits))
	case r.commits > 0:
		parts = append(parts, fmt.Sprintf("No stale entry found for %s; expired cooldowns were pruned.", r.lock()))
	default:
		parts = append(parts, fmt.Sprintf("No stale state found for %s.", r.lock()))
	}
	if r.deadline {
		parts = append(parts, fmt.Sprintf("The %s status-scan deadline elapsed: %d entr%s were not verified and were kept unchanged (%s).",
			ScanBudget, unchecked, plural(unchecked, "y", "ies"), CodeDeadlineElapsed))
	} else if r.budgetStop {
		parts = append(parts, fmt.Sprintf("The status scan stopped early (%s): %d entr%s unverified or unwritten and kept unchanged; the next run continues.",
			CodeRequestBudgetSpent, r.budgetKept, plural(r.budgetKept, "y remains", "ies remain")))
		if n := len(r.evidenceErrs); n > 0 {
			parts = append(parts, fmt.Sprintf("%d more entr%s could not be verified (%s).", n, plural(n, "y", "ies"), CodeEvidenceUnavailable))
		}
	} else if unchecked > 0 {
		parts = append(parts, fmt.Sprintf("%d entr%s could not be verified and were kept unchanged (%s).", unchecked, plural(unchecked, "y", "ies"), CodeEvidenceUnavailable))
	}
	if len(r.checkpointErr) > 0 {
		parts = append(parts, fmt.Sprintf("%d checkpoint(s) failed (%s).", len(r.checkpointErr), CodeCheckpointFailed))
	}
	return strings.Join(parts, " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
