package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// Outputs of check-unity-runner-availability, written only on success.
const (
	OutputRegisteredRunnerCount = "registered-runner-count"
	OutputMatchedRunners        = "matched-runners"
	OutputOnlineRunnerCount     = "online-runner-count"
	OutputBusyRunnerCount       = "busy-runner-count"
)

// Run is the check-unity-runner-availability action. It validates the
// inputs (nothing is sent for a refused input), mints one reader token,
// reads the inventory and fails with an *Error when the repository can use
// no runner group, a label set has no registered runner, or the inventory
// cannot be read. On success it writes the outputs; either way, once the
// inventory was read, the job summary holds one row per label set.
func Run(ctx context.Context, deps Deps) error {
	d := deps.WithDefaults()
	s, err := LoadSettings(d.Getenv)
	a := actionio.New(s.Files.Getenv, d.Stdout)
	maskKey(a, s.RawKey) // first, so that no refusal can print the key
	if err != nil {
		return err
	}
	return Execute(ctx, s, d)
}

// Execute is the action's core over settled settings (the key already
// masked): one reader token, the inventory, the verdict, the summary and,
// on success, the outputs.
func Execute(ctx context.Context, s Settings, deps Deps) error {
	d := deps.WithDefaults()
	a := actionio.New(s.Files.Getenv, d.Stdout)
	start := d.Clock.Now()
	in := s.Inputs
	c, err := ghclient.New(ctx, ghclient.Config{
		APIURL:            s.APIURL,
		AppID:             in.AppID,
		PrivateKey:        in.PrivateKey,
		InstallationOwner: in.Owner,
		// Least privilege: the token can read the runner inventory and
		// nothing else (metadata: read is implied by GitHub).
		Permissions: &github.InstallationPermissions{OrganizationSelfHostedRunners: github.String(PermissionLevel)},
		Transport:   capTransport{base: d.Transport, limit: 2 * MaxResponseBytes},
		Clock:       d.Clock,
		Jitter:      d.Jitter,
		Knobs:       Knobs(),
		Warn:        a.Warning,
		Mask:        a.Mask,
	})
	if err != nil {
		return &Error{Reason: ReasonInventoryUnreadable, Err: err, Message: "the reader App credentials are unusable: " + err.Error()}
	}
	inv := &inventory{c: c, owner: in.Owner, repository: in.Repository, appID: in.AppID,
		budget: ghclient.Budget{Deadline: start.Add(Deadline), MaxAttempts: MaxAttempts}}
	p := &preflight{a: a, in: in}
	rd, err := p.read(ctx, inv)
	if err == nil && rd.inconsistent != nil && rd.provesAbsence() {
		// The pages did not add up (a runner registered or removed while
		// they were read): the listing may have skipped one, so it cannot
		// prove that a label set has no runner. Read it once more.
		a.Notice("The runner inventory changed while it was read (" + rd.inconsistent.Error() + "); reading it once more before concluding that a label set has no runner.")
		rd, err = p.read(ctx, inv)
		if err == nil && rd.inconsistent != nil && rd.provesAbsence() {
			err = &Error{Reason: ReasonInventoryInconsistent, Err: rd.inconsistent, Message: rd.inconsistent.Error() +
				"; read twice, the inventory kept changing, so it cannot prove that a label set has no runner; re-run the job"}
		}
	}
	if err == nil && len(rd.groups) == 0 {
		err = &Error{Reason: ReasonNoVisibleGroup, Message: fmt.Sprintf(
			"no runner group of %s is visible to %s/%s, so no self-hosted job of this repository can ever start: give the repository access to the runner group that holds the Unity runners (organization settings → Actions → Runner groups)",
			in.Owner, in.Owner, in.Repository)}
	}
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			if pe.Reason == ReasonAPIUnavailable {
				a.Warning(ReasonAPIUnavailable + ": the runner inventory API is unavailable; this run's failure says nothing about whether the Unity runners exist.")
			}
			p.summary(nil, 0, pe)
		}
		return err
	}
	if rd.inconsistent != nil {
		a.Warning("The runner inventory changed while it was read (" + rd.inconsistent.Error() + "); every label set has a registered runner all the same.")
	}
	if rd.ignoredLabels > 0 {
		a.Warning(fmt.Sprintf("%d runner label(s) whose name is not a string were ignored (GitHub answered with a label that no runs-on list can name).", rd.ignoredLabels))
	}
	rep, groups := rd.report, len(rd.groups)
	if missing := rep.Missing(); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, s := range missing {
			names[i] = s.String()
		}
		e := &Error{Reason: ReasonLabelSetWithoutRunner, Message: fmt.Sprintf(
			"no registered runner in the %d runner group(s) visible to %s/%s carries every label of %s; a job queued for it could never start: register a runner with those labels in one of those groups, or give the repository access to the group that has one",
			groups, in.Owner, in.Repository, strings.Join(names, " and "))}
		p.annotate(rep)
		p.summary(&rep, groups, e)
		return e
	}
	p.annotate(rep)
	p.summary(&rep, groups, nil)
	return p.writeOutputs(rep)
}

// preflight is the state of one run.
type preflight struct {
	a  *actionio.IO
	in Inputs
}

// inventoryRead is one read of the inventory.
type inventoryRead struct {
	groups []runners.Group
	report runners.Report
	// inconsistent is the first listing whose pages did not add up (nil:
	// every listing was consistent).
	inconsistent  *runners.PageError
	ignoredLabels int
}

// provesAbsence reports whether the read would conclude that something is
// missing (no visible group, or a label set without a runner), which an
// inconsistent read cannot prove.
func (r inventoryRead) provesAbsence() bool { return len(r.groups) == 0 || len(r.report.Missing()) > 0 }

// read lists the visible groups and their runners and evaluates the label
// sets.
func (p *preflight) read(ctx context.Context, inv *inventory) (inventoryRead, error) {
	var rd inventoryRead
	groups, incons, err := inv.groups(ctx)
	if err != nil {
		return rd, err
	}
	rd.groups, rd.inconsistent = groups, incons
	var all []runners.Runner
	for _, g := range groups {
		rs, ignored, incons, err := inv.runners(ctx, g)
		if err != nil {
			return rd, err
		}
		if rd.inconsistent == nil {
			rd.inconsistent = incons
		}
		rd.ignoredLabels += ignored
		all = append(all, rs...)
	}
	rd.report = runners.Evaluate(p.in.LabelSets, all)
	return rd, nil
}

// annotate warns about label sets that wait on offline runners and notes
// saturated ones.
func (p *preflight) annotate(rep runners.Report) {
	for _, s := range rep.Sets {
		switch {
		case s.AllOffline():
			p.a.Warning(fmt.Sprintf("Label set %s has no online runner: the licensed job will wait until one of these comes back: %s (all offline).",
				s.Labels, runners.RunnerNames(s.Runners)))
		case s.AllBusy():
			p.a.Notice(fmt.Sprintf("Label set %s: all %d runner(s) are busy; the licensed job will queue until one is free.", s.Labels, len(s.Runners)))
		}
	}
}

// matchedRunner is one entry of the matched-runners output.
type matchedRunner struct {
	Labels  []string `json:"labels"`
	Runners []string `json:"runners"`
}

func (p *preflight) writeOutputs(rep runners.Report) error {
	matched := make([]matchedRunner, 0, len(rep.Sets))
	for _, s := range rep.Sets {
		m := matchedRunner{Labels: append([]string{}, s.Labels...), Runners: []string{}}
		for _, r := range s.Runners {
			m.Runners = append(m.Runners, r.Name)
		}
		matched = append(matched, m)
	}
	js, err := json.Marshal(matched)
	if err != nil {
		return err
	}
	return p.a.SetOutputs([][2]string{
		{OutputRegisteredRunnerCount, strconv.Itoa(rep.Registered)},
		{OutputMatchedRunners, string(js)},
		{OutputOnlineRunnerCount, strconv.Itoa(rep.Online)},
		{OutputBusyRunnerCount, strconv.Itoa(rep.Busy)},
	})
}

// summary writes the job summary: one table, label set → runners (name,
// online/offline, busy), with the verdict; or the failure alone when the
// inventory could not be read.
func (p *preflight) summary(rep *runners.Report, groups int, fail *Error) {
	var b strings.Builder
	b.WriteString("### Unity runner preflight\n\n")
	fmt.Fprintf(&b, "Repository %s:", markdown.Code(p.in.Owner+"/"+p.in.Repository))
	if rep != nil {
		fmt.Fprintf(&b, " %d visible runner group(s), %d registered runner(s) (%d online, %d busy).\n\n", groups, rep.Registered, rep.Online, rep.Busy)
		b.WriteString("| Label set | Runners | Verdict |\n|---|---|---|\n")
		for _, s := range rep.Sets {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", markdown.Code(strings.Join(s.Labels, ", ")), runnerCell(s.Runners), verdictCell(s))
		}
		b.WriteString("\n")
	} else {
		b.WriteString(" the inventory was not read.\n\n")
	}
	if fail != nil {
		fmt.Fprintf(&b, "**Failed: %s.** %s\n", markdown.Code(fail.Reason), markdown.Message(fail.Message))
	}
	if err := p.a.Summary(b.String()); err != nil && !errors.Is(err, actionio.ErrFileCommandUnavailable) {
		p.a.Warning("Could not write the job summary: " + err.Error())
	}
}

func runnerCell(rs []runners.Runner) string {
	if len(rs) == 0 {
		return "none"
	}
	parts := make([]string, 0, min(len(rs), runners.MaxNamedRunners)+1)
	for i, r := range rs {
		if i == runners.MaxNamedRunners {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-i))
			break
		}
		state := "offline"
		if r.Online() {
			state = "online"
		}
		busy := "idle"
		if r.Busy {
			busy = "busy"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", markdown.Text(runners.DisplayName(r.Name)), state, busy))
	}
	return strings.Join(parts, "<br>")
}

func verdictCell(s runners.SetReport) string {
	switch {
	case !s.Available():
		return "**no registered runner**"
	case s.AllOffline():
		return fmt.Sprintf("available, ⚠️ all %d offline: waits for one to come back", len(s.Runners))
	case s.AllBusy():
		return fmt.Sprintf("available, all %d busy: queues until one is free", len(s.Runners))
	}
	return fmt.Sprintf("available: %d online, %d busy", s.Online, s.Busy)
}
