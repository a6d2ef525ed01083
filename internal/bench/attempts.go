package bench

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// Where a burst's write attempts and secondary-limit answers go
// (docs/performance.md §29): every content-creating request counts toward
// GitHub's 80 a minute whether it lands or not, and a secondary-limit
// answer holds its job back. The class sweep (make bench-class
// BREAKDOWN=1) prints, per cell, how the jobs' state writes ended, by the
// step that sent them, and which requests the secondary limits refused.

// Write outcomes (writeOutcome).
const (
	outcomeLanded      = "landed"
	outcomeLostCommit  = "lost: another write landed while it committed"
	outcomeLostLagged  = "lost: decided on a lagged read"
	outcomeLostChanged = "lost: the state changed since its read"
	outcomeRefused     = "refused: "
)

// Attempts is where a run's state writes and secondary-limit answers went.
// It counts the jobs' own traffic over the whole run (not only the
// measurement window), and the answers the emulator's secondary limits
// gave (RequestRecord.Secondary): an injected secondary-limit fault is
// named by its status among the writes and not counted among the answers.
type Attempts struct {
	// Writes counts the jobs' state-file writes by the step that sent them
	// (acquire or release) and how each ended (writeOutcome), keyed
	// "step: outcome".
	Writes map[string]int `json:"writes,omitempty"`
	// Secondary counts the jobs' secondary-limit answers by the step that
	// got them, the limit, and what the request was (requestKind), keyed
	// "step: limit: kind".
	Secondary map[string]int `json:"secondary,omitempty"`
}

// writeOutcome is how a state write ended, given the job's last state read
// before it (nil when it made none): landed; refused by a secondary limit;
// lost its compare-and-swap because another write landed in its commit
// window (the emulator's branch-head race, docs/emulator.md); lost because it was
// decided on a version a lagging replica served; or lost because another
// write landed between its read and its write. Any other answer is named
// by its status.
func writeOutcome(w emulator.RequestRecord, lastRead *emulator.RequestRecord) string {
	switch {
	case w.Status >= 200 && w.Status < 300:
		return outcomeLanded
	case w.Secondary != "":
		return outcomeRefused + w.Secondary
	case w.Status != http.StatusConflict && w.Status != http.StatusUnprocessableEntity:
		return fmt.Sprintf("answered %d", w.Status)
	case w.BranchHeadConflict:
		return outcomeLostCommit
	case lastRead != nil && lastRead.LaggedRead:
		return outcomeLostLagged
	}
	return outcomeLostChanged
}

// countAttempts adds one job's records (oldest first), each sent by the step
// phase names (by request ID), to a.
func (a *Attempts) countAttempts(recs []emulator.RequestRecord, phase map[string]string) {
	var lastRead *emulator.RequestRecord
	for i := range recs {
		rec := recs[i]
		step := phase[rec.ID]
		if step == "" {
			step = "other"
		}
		switch {
		case isStateRead(rec) && rec.Secondary == "":
			lastRead = &recs[i]
		case isContentWrite(rec) && strings.HasSuffix(rec.Path, "/contents/"+simStatePath):
			if a.Writes == nil {
				a.Writes = map[string]int{}
			}
			a.Writes[step+": "+writeOutcome(rec, lastRead)]++
		}
		if rec.Secondary != "" {
			if a.Secondary == nil {
				a.Secondary = map[string]int{}
			}
			a.Secondary[step+": "+rec.Secondary+": "+requestKind(rec)]++
		}
	}
}

// attempts counts the jobs' traffic in byID.
func attempts(jobs []*simJob, byID map[string]emulator.RequestRecord) Attempts {
	var a Attempts
	phase := phases(jobs)
	for _, j := range jobs {
		a.countAttempts(jobRecords(j, byID, ""), phase)
	}
	return a
}

// add sums b into a.
func (a *Attempts) add(b Attempts) {
	for k, v := range b.Writes {
		if a.Writes == nil {
			a.Writes = map[string]int{}
		}
		a.Writes[k] += v
	}
	for k, v := range b.Secondary {
		if a.Secondary == nil {
			a.Secondary = map[string]int{}
		}
		a.Secondary[k] += v
	}
}

// RenderAttempts writes, per result, the write outcomes and secondary-limit
// answers of Attempts, most frequent first, each with its count per
// admitted job (Result.Admitted: the measurement window's admissions,
// the whole run for the class sweep's cells).
func RenderAttempts(w io.Writer, results []*Result) error {
	for _, r := range results {
		if _, err := fmt.Fprintf(w, "%s (%d admitted jobs):\n", strings.TrimPrefix(r.Name, "class-"), r.Admitted); err != nil {
			return err
		}
		for _, part := range []struct {
			title string
			n     map[string]int
		}{{"state writes", r.Attempts.Writes}, {"secondary-limit answers", r.Attempts.Secondary}} {
			keys := make([]string, 0, len(part.n))
			for k := range part.n {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if part.n[keys[i]] != part.n[keys[j]] {
					return part.n[keys[i]] > part.n[keys[j]]
				}
				return keys[i] < keys[j]
			})
			if len(keys) == 0 {
				if _, err := fmt.Fprintf(w, "  %s: none\n", part.title); err != nil {
					return err
				}
				continue
			}
			if _, err := fmt.Fprintf(w, "  %s:\n", part.title); err != nil {
				return err
			}
			for _, k := range keys {
				if _, err := fmt.Fprintf(w, "    %5d  %5.2f a job  %s\n", part.n[k], float64(part.n[k])/float64(max(r.Admitted, 1)), k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
