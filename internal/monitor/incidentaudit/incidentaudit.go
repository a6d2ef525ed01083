// Package incidentaudit is the Build lock incident recovery audit
// (cmd/lock-recovery-audit; spec §4.5, build-lock-reference "Stale
// Recovery"). Every ten minutes it reads the committed lock state with the
// workflow token only, classifies it, and keeps one deduplicated alert issue
// that carries the exact incident ID and the recover-incident inputs, so
// operators never have to read lock-state to recover.
//
// Classification:
//
//   - healthy: valid state without an active incident. An open alert is
//     closed without rewriting its body (the incident record stays
//     readable); with no alert, nothing is written.
//   - incident-active: valid schema-5 state with an active incident. The
//     alert is created, updated or re-opened with a deterministic body: an
//     unchanged incident makes no write.
//   - lock-state-invalid: the evidence cannot be trusted. Reasons:
//     unavailable (the read failed, including 404), malformed, wrong-lock,
//     unsupported-schema, digest-inconsistent. The run fails red and the
//     alert is left untouched.
//
// Validation is lockstate.Decode's (every normalizeState rule, incident
// patterns, runUrl and digest), plus three audit-only rules of the
// reference: a non-null activeIncident below schema 5, incident text with
// control characters or U+2028/U+2029, and an epoch reportedAt are
// malformed. The audit never writes lock state and never relaxes the
// exact-ID portal proof that recovery requires.
package incidentaudit

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
)

// Alert identity (spec §4.5).
const (
	// Marker identifies the alert issue (with its author).
	Marker = "<!-- build-lock-incident-recovery -->"
	// Title is the alert's title on creation; operators may rename it.
	Title = "ops: Unity build lock global incident requires recovery"
	// MaxStateBytes caps the state read (1 MiB).
	MaxStateBytes = 1 << 20
	// DefaultStateRef is the branch that carries lock state.
	DefaultStateRef = "lock-state"
)

// Classification is the audit's verdict.
type Classification string

// Classifications.
const (
	// Healthy is valid state without an active incident.
	Healthy Classification = "healthy"
	// IncidentActive is valid schema-5 state with an active incident.
	IncidentActive Classification = "incident-active"
	// LockStateInvalid is evidence that cannot be trusted; see Reason.
	LockStateInvalid Classification = "lock-state-invalid"
)

// Reason says why evidence is lock-state-invalid.
type Reason string

// Reasons.
const (
	// ReasonUnavailable means the state could not be read.
	ReasonUnavailable Reason = "unavailable"
	// ReasonMalformed means the document breaks a state rule.
	ReasonMalformed Reason = "malformed"
	// ReasonWrongLock means the document belongs to another lock.
	ReasonWrongLock Reason = "wrong-lock"
	// ReasonUnsupportedSchema means schemaVersion is not 1 through 5.
	ReasonUnsupportedSchema Reason = "unsupported-schema"
	// ReasonDigestInconsistent means the incident's evidenceDigest or
	// incidentId does not match its evidence.
	ReasonDigestInconsistent Reason = "digest-inconsistent"
)

// InvalidError is returned for lock-state-invalid evidence.
type InvalidError struct {
	Reason Reason
	Detail string
}

// Error implements error.
func (e *InvalidError) Error() string {
	return fmt.Sprintf("lock-state-invalid (%s): %s", e.Reason, e.Detail)
}

var (
	lockRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	refRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)
)

// Config is one audit's target.
type Config struct {
	// Lock is the lock name (^[a-z0-9][a-z0-9-]{0,63}$).
	Lock string
	// StateRef is the branch or ref holding locks/<lock>.json.
	StateRef string
	// Owner and Repo name the lock repository (where the alert lives too).
	Owner, Repo string
	// ServerURL is GITHUB_SERVER_URL; incident runUrls must start with it.
	ServerURL string
}

// Validate checks the flag patterns (the first problem; LoadSettings lists
// them all).
func (c Config) Validate() error {
	var p edgesettings.Problems
	c.problems(&p)
	if err := p.Err(); err != nil {
		return err.(*edgesettings.Error).Problems[0]
	}
	return nil
}

// problems adds every configuration problem to p.
func (c Config) problems(p *edgesettings.Problems) {
	if !lockRE.MatchString(c.Lock) {
		p.Add(fmt.Errorf("%w: --lock %q must match %s", monitor.ErrUsage, c.Lock, lockRE))
	}
	if !refRE.MatchString(c.StateRef) || strings.Contains(c.StateRef, "..") || strings.Contains(c.StateRef, "//") {
		p.Add(fmt.Errorf("%w: --state-ref %q must match %s without .. or //", monitor.ErrUsage, c.StateRef, refRE))
	}
	if _, err := lockstate.ServerOrigin(c.ServerURL); err != nil {
		p.Add(fmt.Errorf("%w: %v", monitor.ErrUsage, err))
	}
}

// StatePath is the state file's path in the repository.
func (c Config) StatePath() string { return "locks/" + c.Lock + ".json" }

// Evidence is a classified state.
type Evidence struct {
	Classification Classification
	// Incident is set for IncidentActive.
	Incident *lockstate.Incident
	// SchemaVersion is the state's schema (0 when invalid).
	SchemaVersion int
}

// Report is the outcome of one audit run.
type Report struct {
	Evidence
	// Sync is the alert synchronization (zero when not attempted).
	Sync githubissue.Result
}

// Classify decodes a state document and classifies it. It returns an
// *InvalidError for lock-state-invalid evidence.
func Classify(data []byte, cfg Config) (Evidence, error) {
	s, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: cfg.Lock, ServerURL: cfg.ServerURL})
	if err != nil {
		return Evidence{Classification: LockStateInvalid}, &InvalidError{Reason: decodeReason(err, data), Detail: err.Error()}
	}
	if s.SchemaVersion < 5 {
		var raw struct {
			ActiveIncident json.RawMessage `json:"activeIncident"`
		}
		if json.Unmarshal(data, &raw) == nil && len(raw.ActiveIncident) > 0 && string(raw.ActiveIncident) != "null" {
			return Evidence{Classification: LockStateInvalid}, &InvalidError{Reason: ReasonMalformed,
				Detail: fmt.Sprintf("schema %d state carries a non-null activeIncident, which only schema 5 defines", s.SchemaVersion)}
		}
	}
	inc := s.ActiveIncident
	if inc == nil {
		return Evidence{Classification: Healthy, SchemaVersion: s.SchemaVersion}, nil
	}
	for name, v := range map[string]string{"incidentId": inc.IncidentID, "repository": inc.Repository, "workflow": inc.Workflow,
		"job": inc.Job, "runId": inc.RunID, "runAttempt": inc.RunAttempt, "runUrl": inc.RunURL, "runnerId": inc.RunnerID,
		"reportedAt": inc.ReportedAt, "reason": inc.Reason, "evidenceDigest": inc.EvidenceDigest} {
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == '\u2028' || r == '\u2029' }) {
			return Evidence{Classification: LockStateInvalid}, &InvalidError{Reason: ReasonMalformed,
				Detail: fmt.Sprintf("activeIncident.%s contains a control or line-separator character", name)}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, inc.ReportedAt)
	if err != nil || t.Equal(time.Unix(0, 0)) {
		return Evidence{Classification: LockStateInvalid}, &InvalidError{Reason: ReasonMalformed,
			Detail: "activeIncident.reportedAt must be an RFC 3339 time after the epoch"}
	}
	return Evidence{Classification: IncidentActive, Incident: inc, SchemaVersion: s.SchemaVersion}, nil
}

// decodeReason maps lockstate's typed decode errors to a Reason.
func decodeReason(err error, data []byte) Reason {
	switch lockstate.CodeOf(err) {
	case lockstate.CodeLockMismatch:
		return ReasonWrongLock
	case lockstate.CodeUnsupportedSchema, lockstate.CodeNewerSchema:
		return ReasonUnsupportedSchema
	case lockstate.CodeInvalidIncident:
		if digestInconsistent(data) {
			return ReasonDigestInconsistent
		}
	}
	return ReasonMalformed
}

// digestInconsistent reports whether the document's incident has all its
// evidence fields but an evidenceDigest or incidentId that lockstate's
// EvidenceDigest does not reproduce.
func digestInconsistent(data []byte) bool {
	var raw struct {
		ActiveIncident map[string]any `json:"activeIncident"`
	}
	if json.Unmarshal(data, &raw) != nil || raw.ActiveIncident == nil {
		return false
	}
	f := map[string]string{}
	for _, k := range []string{"incidentId", "repository", "workflow", "job", "runId", "runAttempt", "runnerId", "reason", "evidenceDigest"} {
		s, ok := raw.ActiveIncident[k].(string)
		if !ok {
			return false
		}
		f[k] = s
	}
	d := lockstate.EvidenceDigest(f["repository"], f["workflow"], f["job"], f["runId"], f["runAttempt"], f["runnerId"], f["reason"])
	return f["evidenceDigest"] != d || f["incidentId"] != "incident-"+d[:24]
}

// AlertBody renders the deterministic alert body for an incident: the
// same incident always yields the same bytes. Every field from state is
// escaped; the run link is the runUrl Decode proved equal to
// <server>/<repository>/actions/runs/<runId>.
func AlertBody(cfg Config, inc *lockstate.Incident) string {
	esc := markdown.Text
	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("## Unity build lock global incident requires recovery\n\n")
	fmt.Fprintf(&b, "Lock `%s` (state `%s` on `%s` in `%s/%s`) has an active account incident. "+
		"**Every acquire fails with `account-blocked` until an operator recovers it.** Incidents never expire.\n\n",
		cfg.Lock, cfg.StatePath(), cfg.StateRef, cfg.Owner, cfg.Repo)
	b.WriteString("| Evidence | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Incident ID | `%s` |\n", inc.IncidentID)
	fmt.Fprintf(&b, "| Reason | `%s` |\n", esc(inc.Reason))
	fmt.Fprintf(&b, "| Reported at | %s |\n", esc(inc.ReportedAt))
	fmt.Fprintf(&b, "| Repository | %s |\n", esc(inc.Repository))
	fmt.Fprintf(&b, "| Workflow | %s |\n", esc(inc.Workflow))
	fmt.Fprintf(&b, "| Job | %s |\n", esc(inc.Job))
	run := "run " + esc(inc.RunID) + " attempt " + esc(inc.RunAttempt)
	if u, err := url.Parse(inc.RunURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.User == nil {
		run = "[" + run + "](" + u.String() + ")"
	}
	fmt.Fprintf(&b, "| Run | %s |\n", run)
	fmt.Fprintf(&b, "| Runner | %s |\n", esc(inc.RunnerID))
	fmt.Fprintf(&b, "| Evidence digest | `%s` |\n\n", esc(inc.EvidenceDigest))
	b.WriteString("### Recover\n\n")
	b.WriteString("1. Reconcile the Unity portal inventory: every seat the runner above activated must be returned or removed in the Unity ID portal. " +
		"Do not continue until it is.\n")
	b.WriteString("2. Dispatch **Recover build lock** (`" + lockview.RecoverWorkflow + "`) with exactly these inputs:\n\n")
	b.WriteString("   | Input | Value |\n   |---|---|\n")
	b.WriteString("   | `operation` | `recover-incident` |\n")
	fmt.Fprintf(&b, "   | `incident-id` | `%s` |\n", inc.IncidentID)
	b.WriteString("   | `portal-cleanup-confirmed` | `true` |\n\n")
	b.WriteString("   ```sh\n   " + lockview.RecoverIncidentCommand(inc.IncidentID, "") + "\n   ```\n\n")
	b.WriteString("Recovery compares this exact incident ID before its compare-and-swap write and starts a release cooldown; it does not free the seat outright. " +
		"This issue closes automatically on the first audit after recovery and keeps this text as the incident record.\n\n")
	b.WriteString("_Maintained by the Build lock incident recovery audit (`lock-recovery-audit.yml`). The audit reads lock state with the workflow token only and never writes it._\n")
	return b.String()
}

// Auditor runs the audit against one lock repository.
type Auditor struct {
	cfg    Config
	gh     *ghclient.Client
	issues *monitor.IssueSync
}

// New returns an Auditor. issueOpts may be zero; its Client, Owner and Repo
// are set from gh and cfg.
func New(cfg Config, gh *ghclient.Client, issueOpts githubissue.Options) (*Auditor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ic, err := monitor.NewIssueSync(gh, cfg.Owner, cfg.Repo, issueOpts, "incident alert")
	if err != nil {
		return nil, err
	}
	return &Auditor{cfg: cfg, gh: gh, issues: ic}, nil
}

// Run reads, classifies and synchronizes the alert. Invalid or unavailable
// evidence returns an *InvalidError without touching the alert.
func (a *Auditor) Run(ctx context.Context) (Report, error) {
	data, err := a.read(ctx)
	if err != nil {
		return Report{Evidence: Evidence{Classification: LockStateInvalid}}, &InvalidError{Reason: ReasonUnavailable, Detail: err.Error()}
	}
	ev, err := Classify(data, a.cfg)
	if err != nil {
		return Report{Evidence: ev}, err
	}
	spec := githubissue.Spec{Marker: Marker, Title: Title}
	if ev.Classification == IncidentActive {
		spec.State, spec.Body = githubissue.Open, AlertBody(a.cfg, ev.Incident)
	} else {
		spec.State, spec.PreserveBodyOnClose = githubissue.Closed, true
	}
	res, err := a.issues.Sync(ctx, spec)
	return Report{Evidence: ev, Sync: res}, err
}

// read fetches the raw state document at the configured ref.
func (a *Auditor) read(ctx context.Context) ([]byte, error) {
	path := a.cfg.StatePath()
	u := fmt.Sprintf("repos/%s/%s/contents/%s?ref=%s", a.cfg.Owner, a.cfg.Repo, path, url.QueryEscape(a.cfg.StateRef))
	b, err := a.gh.GetRaw(ctx, "GET raw contents "+path, u, MaxStateBytes, monitor.DefaultRequestTimeout)
	if errors.Is(err, ghclient.ErrRawTooLarge) {
		return nil, fmt.Errorf("read %s at %s: state exceeds %d bytes", path, a.cfg.StateRef, MaxStateBytes)
	}
	if err != nil {
		if ghclient.IsNotFound(err) {
			return nil, fmt.Errorf("read %s at %s in %s/%s: not found (check --lock, --state-ref and the token's contents: read)", path, a.cfg.StateRef, a.cfg.Owner, a.cfg.Repo)
		}
		return nil, fmt.Errorf("read %s at %s: %w", path, a.cfg.StateRef, err)
	}
	return b, nil
}

// Main is the lock-recovery-audit command: flags --lock, --state-ref and
// --repo (default GITHUB_REPOSITORY), read with the environment once by
// LoadSettings, and a report on stdout. Errors are also reported as
// ::error:: workflow commands on stdout; the returned error decides the
// exit code (monitor.ExitCode).
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps monitor.Deps) error {
	err := run(ctx, args, getenv, stdout, stderr, deps)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		monitor.Commands(stdout).Error("Build lock incident recovery audit: " + err.Error())
		fmt.Fprintln(stderr, "lock-recovery-audit:", actionio.EscapeData(err.Error()))
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps monitor.Deps) error {
	s, err := LoadSettings(args, getenv, stderr)
	if err != nil {
		return err
	}
	return Execute(ctx, s, stdout, deps)
}

// Execute is one audit over settled settings: start the run, read,
// classify, sync the alert and print the one-line report.
func Execute(ctx context.Context, s Settings, stdout io.Writer, deps monitor.Deps) error {
	sess, err := monitor.Start(ctx, s.Monitor, deps, monitor.Commands(stdout).Warning)
	if err != nil {
		return err
	}
	defer sess.Close()
	a, err := New(s.Config, sess.GH, githubissue.Options{Clock: sess.Clock})
	if err != nil {
		return err
	}
	rep, err := a.Run(sess.Ctx)
	if err != nil {
		return sess.Budget.Explain(sess.Ctx, monitor.CodeRequestBudgetSpent, err)
	}
	line := fmt.Sprintf("lock-recovery-audit: lock=%s ref=%s schema=%d classification=%s", s.Config.Lock, s.Config.StateRef, rep.SchemaVersion, rep.Classification)
	if rep.Incident != nil {
		line += " incident=" + rep.Incident.IncidentID
	}
	line += " alert=" + string(rep.Sync.Action)
	if rep.Sync.Issue != nil {
		line += fmt.Sprintf(" issue=#%d %s", rep.Sync.Issue.Number, rep.Sync.Issue.HTMLURL)
	}
	fmt.Fprintln(stdout, actionio.EscapeData(line))
	return nil
}
