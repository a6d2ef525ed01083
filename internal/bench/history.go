package bench

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/histgen"
)

// HistoryRow is one `buildlock history verify` measurement: a generated
// history of Commits commits read back through the emulator's REST API and
// verified from its creation (no checkpoint).
type HistoryRow struct {
	Commits int `json:"commits"`
	// ListPages, VersionReads and Requests are what reading the history
	// cost: commits-list pages (of 100), Contents reads of versions, and
	// every request the emulator served (config history, the proof of
	// where the file was created and the repository lookup included).
	ListPages    int   `json:"list_pages"`
	VersionReads int   `json:"version_reads"`
	Requests     int64 `json:"requests"`
	// PagesBound is ceil(Commits/100): the most list pages allowed.
	PagesBound int `json:"pages_bound"`
	// ReadMS, VerifyMS and TotalMS are wall times of reading (in-memory
	// transport), verifying and both.
	ReadMS   int64  `json:"read_ms"`
	VerifyMS int64  `json:"verify_ms"`
	TotalMS  int64  `json:"total_ms"`
	Status   string `json:"status"`
}

// historyJobs is how many generated jobs give about n commits (a job
// writes 2 to 3 commits: join, admission, release).
func historyJobs(n int) int { return n*2/5 + 5 }

// HistoryScale generates a history of at least each target number of
// commits and measures its verification. It fails when the history does
// not verify clean or a request bound is broken: more than one version read
// per commit (every commit is a distinct version) or more than one list
// page per 100 commits.
func HistoryScale(targets []int) ([]HistoryRow, error) {
	var rows []HistoryRow
	for _, n := range targets {
		w, err := histgen.New(histgen.Options{Seed: uint64(n), Jobs: historyJobs(n), Seats: 3, Runners: 8, UnsafeEvery: 11, DeadEvery: 23,
			CooldownSeconds: 30, Interarrival: 5 * time.Minute})
		if err != nil {
			return nil, err
		}
		truth, err := w.Run(context.Background())
		if err != nil {
			return nil, err
		}
		c, err := ghclient.New(context.Background(), ghclient.Config{APIURL: "https://api.github.com/", Token: w.ReaderToken(), Transport: w.Emulator.Transport(), Clock: w.Clock})
		if err != nil {
			return nil, err
		}
		w.Emulator.ResetMetrics()
		start := time.Now()
		l, err := ghsource.Load(context.Background(), ghsource.Options{Client: c, Owner: histgen.Owner, Repo: histgen.Repo, Lock: histgen.Lock}, nil)
		if err != nil {
			return nil, err
		}
		read := time.Since(start)
		in := l.Input
		in.ServerURL, in.Writers, in.Operators = histgen.ServerURL, []string{histgen.WriterLogin}, []string{histgen.OperatorLogin}
		vstart := time.Now()
		res := history.Verify(in)
		row := HistoryRow{Commits: truth.Commits, ListPages: l.Counts.ListPages, VersionReads: l.Counts.VersionReads,
			Requests: w.Emulator.Metrics().Requests, PagesBound: (truth.Commits + ghsource.PerPage - 1) / ghsource.PerPage,
			ReadMS: read.Milliseconds(), VerifyMS: time.Since(vstart).Milliseconds(), TotalMS: time.Since(start).Milliseconds(), Status: string(res.Status)}
		rows = append(rows, row)
		switch {
		case !res.OK():
			return rows, fmt.Errorf("%d commits: status %s: %+v", truth.Commits, res.Status, res.FirstViolation)
		case row.VersionReads > row.Commits:
			return rows, fmt.Errorf("%d commits: %d version reads, more than one per version", row.Commits, row.VersionReads)
		case row.ListPages > row.PagesBound:
			return rows, fmt.Errorf("%d commits: %d list pages, above %d", row.Commits, row.ListPages, row.PagesBound)
		}
	}
	return rows, nil
}

// RenderHistory writes the HistoryScale table.
func RenderHistory(out io.Writer, rows []HistoryRow) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "history commits\tlist pages\tpages bound\tversion reads\trequests\tread (ms)\tverify (ms)\ttotal (ms)\tstatus\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", r.Commits, r.ListPages, r.PagesBound, r.VersionReads, r.Requests, r.ReadMS, r.VerifyMS, r.TotalMS, r.Status)
	}
	return tw.Flush()
}
