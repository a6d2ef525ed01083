package policy

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"
)

// A workflow the reference accepts can fail this audit on day one for
// three things the reference never required: the current-PR-head guard
// (as the licensed job's first step and again through acquire), the hosted
// fallback job that releases a lost runner's seat, and the typed aggregate
// (require-unity-validation, where the reference also accepts a shell
// step testing needs results). MigrationPlan turns those findings into the
// exact YAML to add, in the order to add it, built from the workflow
// itself: the same lock pin, lock name, holder-id-suffix, matrix and
// credentials env as the workflow's acquire.

// MigrationKind says where a MigrationStep's YAML goes.
type MigrationKind string

// Migration step kinds.
const (
	// MigrateFirstStep: insert YAML (one step) as the first step of Job.
	MigrateFirstStep MigrationKind = "first-step"
	// MigrateStepInputs: add YAML (input lines) to the with: of step Step
	// (its id) of Job.
	MigrateStepInputs MigrationKind = "step-inputs"
	// MigrateJob: add YAML (one job) to jobs:, after job After.
	MigrateJob MigrationKind = "job"
	// MigrateNeeds: add the job ids in Needs to the needs: of Job.
	MigrateNeeds MigrationKind = "needs"
)

// MigrationStep is one addition, with the exact YAML to add at the
// indentation of its place in the file.
type MigrationStep struct {
	// Kind says where YAML goes.
	Kind MigrationKind `json:"kind"`
	// Path is the workflow file.
	Path string `json:"path"`
	// Job is the job the addition goes into (the new job's id for
	// MigrateJob).
	Job string `json:"job"`
	// Step names the step whose with: gets YAML (MigrateStepInputs): its
	// id, or its uses: when it has none.
	Step string `json:"step,omitempty"`
	// StepIndex is that step's 0-based index in Job once the earlier
	// additions of the plan are made.
	StepIndex int `json:"stepIndex"`
	// After is the job a new job follows (MigrateJob).
	After string `json:"after,omitempty"`
	// Needs are the job ids to add to Job's needs (MigrateNeeds).
	Needs []string `json:"needs,omitempty"`
	// Text says what to do, in one sentence.
	Text string `json:"text"`
	// YAML is what to add (empty for MigrateNeeds).
	YAML string `json:"yaml,omitempty"`
	// Resolves are the findings this addition removes.
	Resolves []Code `json:"resolves"`
}

// Migration is the plan for one snapshot: the additions in order, and the
// findings they do not resolve (to fix as usual).
type Migration struct {
	Steps     []MigrationStep `json:"steps"`
	Remaining []Finding       `json:"remaining"`
	// Result is the analysis the plan was made from.
	Result Result `json:"-"`
}

// MigrationPlan analyzes s and plans the additions a workflow the reference
// accepts needs here: for each licensed job, in workflow order, the initial
// current-head guard, acquire's pull request identity inputs, a fallback
// job, and the aggregate (a new require-unity-validation job, or the
// fallback's bindings on an existing one). A finding the plan cannot
// resolve from the workflow alone stays in Remaining.
func MigrationPlan(s Snapshot, p Policy) Migration {
	a, res := analyze(s, p)
	m := Migration{Result: res}
	has := map[string]bool{}
	key := func(code Code, path, job string) string { return string(code) + "\x00" + path + "\x00" + job }
	for _, f := range res.Findings {
		has[key(f.Code, f.Path, f.Job)] = true
	}
	resolved := map[string]bool{}
	for _, w := range a.wfs {
		if w.broken || w.remote != nil {
			continue
		}
		taken := map[string]bool{}
		for _, j := range w.jobs {
			taken[strings.ToLower(j.id)] = true
		}
		for _, l := range w.jobs {
			if !l.paid || l.call != nil {
				continue
			}
			acqs := l.acquires()
			if len(acqs) != 1 || acqs[0].id == "" {
				continue
			}
			acq := acqs[0]
			pl := planner{w: w, l: l, acq: acq, lockRepo: a.lockRepo, taken: taken}
			add := func(st MigrationStep, ok bool) {
				if !ok {
					return
				}
				st.Path = w.path
				m.Steps = append(m.Steps, st)
				for _, c := range st.Resolves {
					job := st.Job
					if c == MissingFallbackAggregate {
						job = st.fallbackJob()
					}
					if c == InvalidFallbackRelease || c == MissingUnityAggregate {
						job = l.id
					}
					resolved[key(c, w.path, job)] = true
				}
			}
			if has[key(MissingInitialCurrentHeadGuard, w.path, l.id)] {
				add(pl.guard())
			}
			if has[key(MissingPreLockCurrentHeadGuard, w.path, l.id)] {
				add(pl.acquireInputs())
			}
			fb := pl.fallbackJob()
			newFallback := false
			if fb == nil && has[key(InvalidFallbackRelease, w.path, l.id)] {
				st, ok := pl.addFallback()
				add(st, ok)
				newFallback = ok
			}
			fbID := ""
			if fb != nil {
				fbID = fb.id
			} else if newFallback {
				fbID = pl.fallbackID
			}
			agg := pl.aggregateJob()
			switch {
			case agg == nil && has[key(MissingUnityAggregate, w.path, l.id)] && fbID != "":
				add(pl.addAggregate(fbID))
			case agg != nil && fbID != "" && (newFallback || has[key(MissingFallbackAggregate, w.path, fbID)]):
				for _, st := range pl.bindFallback(agg, fbID) {
					add(st, true)
				}
			}
		}
	}
	for _, f := range res.Findings {
		if !resolved[key(f.Code, f.Path, f.Job)] {
			m.Remaining = append(m.Remaining, f)
		}
	}
	if m.Steps == nil {
		m.Steps = []MigrationStep{}
	}
	if m.Remaining == nil {
		m.Remaining = []Finding{}
	}
	return m
}

// fallbackJob is the job a step's fallback binding names (MigrateNeeds and
// MigrateStepInputs on the aggregate carry it in Needs).
func (st MigrationStep) fallbackJob() string {
	if len(st.Needs) > 0 {
		return st.Needs[0]
	}
	return st.Job
}

// planner builds the additions for one licensed job.
type planner struct {
	w          *workflow
	l          *job
	acq        *step
	lockRepo   string
	taken      map[string]bool
	fallbackID string
	inserted   int // steps the plan put before the licensed job's own
}

// lockUses is the uses: of a lock action at the pin the workflow's acquire
// uses.
func (pl *planner) lockUses(action string) string {
	u := pl.acq.uses
	return u.owner + "/" + u.repo + "/.github/actions/" + action + "@" + u.ref
}

// stepIndent is the indentation of the "- " of the licensed job's steps.
func (pl *planner) stepIndent() string {
	if len(pl.l.steps) > 0 && pl.l.steps[0].raw != nil && pl.l.steps[0].raw.Column > 2 {
		return strings.Repeat(" ", pl.l.steps[0].raw.Column-3)
	}
	return "      "
}

// jobIndent is the indentation of job keys under jobs:.
func (pl *planner) jobIndent() (string, string) {
	jobs := rawGet(pl.w.raw, "jobs")
	ind, step := "  ", "  "
	if jobs != nil && jobs.Kind == yaml.MappingNode && len(jobs.Content) > 1 {
		ind = strings.Repeat(" ", max(jobs.Content[0].Column-1, 0))
		if v := jobs.Content[1]; v.Kind == yaml.MappingNode && len(v.Content) > 0 && v.Content[0].Column > jobs.Content[0].Column {
			step = strings.Repeat(" ", v.Content[0].Column-jobs.Content[0].Column)
		}
	}
	return ind, step
}

func indentLines(s, ind string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = ind + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// guard is the current-head guard as the licensed job's first step.
func (pl *planner) guard() (MigrationStep, bool) {
	y := "- name: Require current PR head\n" +
		"  uses: " + pl.lockUses(ActGuard) + "\n" +
		"  with:\n" +
		"    github-token: ${{ github.token }}\n" +
		"    pull-request-number: ${{ github.event.pull_request.number }}\n" +
		"    expected-head-sha: ${{ github.event.pull_request.head.sha }}\n"
	pl.inserted++
	return MigrationStep{Kind: MigrateFirstStep, Job: pl.l.id,
		Text:     "add the current-PR-head guard as the first step of job " + pl.l.id + " (a superseded pull request run stops before any setup)",
		YAML:     indentLines(y, pl.stepIndent()),
		Resolves: []Code{MissingInitialCurrentHeadGuard}}, true
}

// acquireInputs are the pull request identity inputs acquire revalidates
// the head with while queued.
func (pl *planner) acquireInputs() (MigrationStep, bool) {
	ind := pl.stepIndent() + "    "
	if with := rawGet(pl.acq.raw, "with"); with != nil && with.Kind == yaml.MappingNode && len(with.Content) > 0 {
		ind = strings.Repeat(" ", max(with.Content[0].Column-1, 0))
	}
	y := "github-token: ${{ github.token }}\n" +
		"pull-request-number: ${{ github.event.pull_request.number }}\n" +
		"expected-head-sha: ${{ github.event.pull_request.head.sha }}\n"
	return MigrationStep{Kind: MigrateStepInputs, Job: pl.l.id, Step: pl.acq.id, StepIndex: pl.acq.idx + pl.inserted,
		Text:     "pass acquire (step " + pl.acq.id + " of job " + pl.l.id + ") the pull request's identity, so it revalidates the head while queued",
		YAML:     indentLines(y, ind),
		Resolves: []Code{MissingPreLockCurrentHeadGuard}}, true
}

// fallbackJob is an existing fallback job of the licensed job.
func (pl *planner) fallbackJob() *job {
	for _, j := range pl.w.jobs {
		if j.fallback && j.needsDirect(pl.l.id) {
			return j
		}
	}
	return nil
}

// aggregateJob is an existing require-unity-validation job bound to the
// licensed job.
func (pl *planner) aggregateJob() *job {
	for _, j := range pl.w.jobs {
		for _, s := range j.stepsOf(ActValidation) {
			if needsResult(s.with["unity-result"], pl.l.id) {
				return j
			}
		}
	}
	return nil
}

func (pl *planner) freeID(want string) string {
	id := want
	for n := 2; pl.taken[strings.ToLower(id)]; n++ {
		id = fmt.Sprintf("%s-%d", want, n)
	}
	pl.taken[strings.ToLower(id)] = true
	return id
}

// mappingYAML renders a raw mapping node (an env:, a matrix) as block
// lines, indented by ind.
func mappingYAML(n *yaml.Node, ind string) (string, bool) {
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", false
	}
	return indentLines(string(b), ind), true
}

// addFallback is the hosted fallback job releasing the exact holder id the
// licensed job acquired under, as a terminated return.
func (pl *planner) addFallback() (MigrationStep, bool) {
	l, acq := pl.l, pl.acq
	id := pl.freeID(l.id + "-fallback")
	pl.fallbackID = id
	ind, in := pl.jobIndent()
	suffix := strings.TrimSpace(acq.with["holder-id-suffix"])
	if suffix == "" {
		suffix = "default"
	}
	var b strings.Builder
	b.WriteString(id + ":\n")
	b.WriteString(in + "name: Fallback release for " + l.id + "\n")
	b.WriteString(in + "needs: [" + l.id + "]\n")
	b.WriteString(in + "if: ${{ always() && needs." + l.id + ".result != 'skipped' }}\n")
	b.WriteString(in + "runs-on: ubuntu-latest\n")
	b.WriteString(in + "timeout-minutes: 10\n")
	b.WriteString(in + "permissions: {}\n")
	if strings.Contains(suffix, "matrix.") {
		m := rawPath(l.raw, "strategy", "matrix")
		if m == nil {
			return MigrationStep{}, false
		}
		my, ok := mappingYAML(m, in+in+in)
		if !ok {
			return MigrationStep{}, false
		}
		b.WriteString(in + "strategy:\n" + in + in + "fail-fast: false\n" + in + in + "matrix:\n" + my)
	}
	b.WriteString(in + "outputs:\n" + in + in + "cleanup-result: ${{ steps.release.outputs.cleanup-result }}\n")
	b.WriteString(in + "steps:\n")
	s := in + in + "  "
	b.WriteString(in + in + "- name: Release a seat a lost runner left\n")
	b.WriteString(s + "id: release\n")
	b.WriteString(s + "uses: " + pl.lockUses(ActRelease) + "\n")
	b.WriteString(s + "timeout-minutes: 5\n")
	b.WriteString(s + "with:\n")
	w := s + in
	b.WriteString(w + "lock-name: " + strings.TrimSpace(acq.with["lock-name"]) + "\n")
	b.WriteString(w + "holder-id: ${{ github.repository }}:${{ github.run_id }}:" + l.id + ":" + suffix + "\n")
	b.WriteString(w + "runner-id: ${{ runner.name }}\n")
	b.WriteString(w + "resource-cleanup-status: unknown\n" + w + "resource-health: healthy\n" + w + "resource-reason: return-terminated\n")
	for _, k := range []string{"lock-repository", "state-branch"} {
		if v := strings.TrimSpace(acq.with[k]); v != "" {
			b.WriteString(w + k + ": " + v + "\n")
		}
	}
	if env := rawGet(acq.raw, "env"); env != nil && env.Kind == yaml.MappingNode {
		ey, ok := mappingYAML(env, w)
		if !ok {
			return MigrationStep{}, false
		}
		b.WriteString(s + "env:\n" + ey)
	}
	return MigrationStep{Kind: MigrateJob, Job: id, After: l.id,
		Text:     "add the hosted fallback job " + id + " after job " + l.id + ": if its runner is lost, it releases the exact holder id the job acquired under",
		YAML:     indentLines(b.String(), ind),
		Resolves: []Code{InvalidFallbackRelease}}, true
}

// addAggregate is the require-unity-validation job: the one required
// check, bound to the exact needs results, the classifier, the trust
// decision and the fallback.
func (pl *planner) addAggregate(fbID string) (MigrationStep, bool) {
	l := pl.l
	var pre, cls, static *job
	for _, d := range l.needsClosure() {
		if d.hosted() && d.firstOf(ActPreflight) != nil && (pre == nil || d.line() < pre.line()) {
			pre = d
		}
	}
	for _, j := range pl.w.jobs {
		if j.firstOf(ActClassifyChanges) != nil && cls == nil && l.needsClosure()[strings.ToLower(j.id)] != nil {
			cls = j
		}
	}
	var candidates []*job
	for _, d := range l.needsClosure() {
		if d != pre && d != cls && !d.paid && !d.fallback {
			candidates = append(candidates, d)
		}
	}
	sort.Slice(candidates, func(i, k int) bool { return candidates[i].line() < candidates[k].line() })
	if len(candidates) > 0 {
		static = candidates[0]
	}
	trust := pl.trustValue()
	if pre == nil || static == nil || trust == "" {
		return MigrationStep{}, false
	}
	id := pl.freeID("unity-validation")
	ind, in := pl.jobIndent()
	needs := []string{static.id}
	if cls != nil {
		needs = append(needs, cls.id)
	}
	needs = append(needs, pre.id, l.id, fbID)
	classifierResult, unityRequired := "success", "'true'"
	if cls != nil {
		classifierResult = "${{ needs." + cls.id + ".result }}"
		unityRequired = "${{ needs." + cls.id + ".outputs.unity-required }}"
	}
	var b strings.Builder
	b.WriteString(id + ":\n")
	b.WriteString(in + "name: Unity validation\n")
	b.WriteString(in + "needs: [" + strings.Join(needs, ", ") + "]\n")
	b.WriteString(in + "if: ${{ always() }}\n")
	b.WriteString(in + "runs-on: ubuntu-latest\n")
	b.WriteString(in + "timeout-minutes: 5\n")
	b.WriteString(in + "permissions: {}\n")
	b.WriteString(in + "steps:\n")
	s := in + in + "  "
	b.WriteString(in + in + "- name: Require a complete Unity validation matrix\n")
	b.WriteString(s + "uses: " + pl.lockUses(ActValidation) + "\n")
	b.WriteString(s + "with:\n")
	w := s + in
	for _, kv := range [][2]string{
		{"static-validation-result", "${{ needs." + static.id + ".result }}"},
		{"classifier-result", classifierResult},
		{"unity-required", unityRequired},
		{"trusted-revision", trust},
		{"preflight-result", "${{ needs." + pre.id + ".result }}"},
		{"unity-result", "${{ needs." + l.id + ".result }}"},
		{"fallback-result", "${{ needs." + fbID + ".result }}"},
		{"fallback-cleanup-result", "${{ needs." + fbID + ".outputs.cleanup-result }}"},
	} {
		b.WriteString(w + kv[0] + ": " + kv[1] + "\n")
	}
	var old []string
	for _, j := range pl.w.jobs {
		if j != l && j.needsDirect(l.id) && !j.fallback {
			old = append(old, j.id)
		}
	}
	text := "add the aggregate job " + id + " (require-unity-validation) and make it the one required status check"
	if len(old) > 0 {
		text += ", in place of " + strings.Join(old, ", ")
	}
	return MigrationStep{Kind: MigrateJob, Job: id, After: fbID, Text: text,
		YAML: indentLines(b.String(), ind), Resolves: []Code{MissingUnityAggregate}}, true
}

// trustValue is the trusted-revision binding: the licensed job's trust
// conjunct, or the needed job's output it compares with 'true'.
func (pl *planner) trustValue() string {
	conds, _, valid := pl.l.jobConds()
	if !valid {
		return ""
	}
	for _, c := range conds {
		if trustExpression(c) {
			return "${{ " + render(c) + " }}"
		}
		for _, r := range contextRefsOf(c) {
			parts := strings.Split(r, ".")
			if len(parts) == 4 && parts[0] == "needs" && parts[2] == "outputs" && isEquals(c, r, "true") &&
				pl.l.needsDirect(parts[1]) && outputIsTrust(pl.w, parts[1], parts[3]) {
				return "${{ " + r + " }}"
			}
		}
	}
	return ""
}

// bindFallback binds an existing aggregate to the fallback job: it needs
// it, and its fallback inputs are the fallback's result and cleanup-result.
func (pl *planner) bindFallback(agg *job, fbID string) []MigrationStep {
	v := agg.firstOf(ActValidation)
	var out []MigrationStep
	if !agg.needsDirect(fbID) {
		out = append(out, MigrationStep{Kind: MigrateNeeds, Job: agg.id, Needs: []string{fbID},
			Text: "add " + fbID + " to the needs of the aggregate job " + agg.id, Resolves: []Code{MissingFallbackAggregate}})
	}
	name := v.id
	if name == "" {
		name = ActValidation
	}
	ind := "          "
	if with := rawGet(v.raw, "with"); with != nil && with.Kind == yaml.MappingNode && len(with.Content) > 0 {
		ind = strings.Repeat(" ", max(with.Content[0].Column-1, 0))
	}
	y := "fallback-result: ${{ needs." + fbID + ".result }}\n" +
		"fallback-cleanup-result: ${{ needs." + fbID + ".outputs.cleanup-result }}\n"
	return append(out, MigrationStep{Kind: MigrateStepInputs, Job: agg.id, Step: name, StepIndex: v.idx, Needs: []string{fbID},
		Text: "bind the aggregate (step " + name + " of job " + agg.id + ") to the fallback job " + fbID,
		YAML: indentLines(y, ind), Resolves: []Code{MissingFallbackAggregate}})
}
