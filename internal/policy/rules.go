package policy

import (
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// ---- rule 10: cancellation ----

// cancellationSafe reports whether a concurrency value is a mapping whose
// cancel-in-progress is the plain YAML boolean false. A string-only
// concurrency (no cancel-in-progress key) does not say it literally.
func cancellationSafe(conc *yaml.Node) bool {
	return conc != nil && conc.Kind == yaml.MappingNode && isLiteralFalse(rawGet(conc, "cancel-in-progress"))
}

func (a *analysis) workflowCancellation(w *workflow) {
	conc := rawGet(w.raw, "concurrency")
	if conc != nil && !cancellationSafe(conc) {
		a.add(UnsafeWorkflowCancellation, w.path, "", conc.Line)
	}
}

func (a *analysis) jobCancellation(j *job) {
	if conc := rawGet(j.raw, "concurrency"); conc != nil && !cancellationSafe(conc) {
		a.add(UnsafeJobCancellation, j.wf.path, j.id, conc.Line)
	}
	strat := rawGet(j.raw, "strategy")
	if rawGet(strat, "matrix") != nil && !isLiteralFalse(rawGet(strat, "fail-fast")) {
		a.add(UnsafeMatrixFailFast, j.wf.path, j.id, strat.Line)
	}
}

// ---- rules 2-9 and 11 for one licensed job ----

func (a *analysis) licensedRules(l *job) {
	w := l.wf
	a.triggerRules(l)
	if l.ast.Environment != nil {
		a.add(ApprovalEnvironment, w.path, l.id, l.ast.Environment.Pos.Line)
	}
	if l.ast.Container != nil || l.ast.Services != nil {
		a.add(UnsafeJobContainer, w.path, l.id, l.line())
	}
	a.scopedEnvRules(l)
	a.preflightRule(l)

	acqs := l.acquires()
	var acq *step
	switch {
	case len(acqs) == 0:
		a.add(MissingLockAcquire, w.path, l.id, l.line())
	case len(acqs) > 1 || acqs[0].id == "" || !exprIsPath(acqs[0].with["runner-id"], "runner.name"):
		a.add(AmbiguousLockAcquire, w.path, l.id, acqs[0].line())
	default:
		acq = acqs[0]
	}
	ret := l.firstOf(ActReturn)
	a.editorRules(l, ret)
	a.guardRules(l, acq)
	for _, s := range l.steps {
		if s.nodeOptions {
			a.add(UnsafeNodeOptions, w.path, l.id, s.line())
		}
		if s.provisioning {
			a.add(UnsafeUnityEditorProvisioning, w.path, l.id, s.line())
		}
		if s.provisionKnob {
			a.add(UnityEditorProvisioningControl, w.path, l.id, s.line())
		}
	}
	if acq == nil {
		return
	}
	a.activationRules(l, acq, ret)
	a.suffixRules(l, acq)
	a.fallbackRules(l, acq)
	a.aggregateRules(l)
}

// triggerRules is rule 2: every trigger of the workflow (callers' in
// place of workflow_call) must be eligible for licensed work.
func (a *analysis) triggerRules(l *job) {
	conds, _, _ := l.jobConds()
	for _, t := range l.wf.triggers(map[*workflow]bool{}) {
		if !a.eligible(t, conds) {
			a.add(IneligibleUnityTrigger, t.wf.path, l.id, t.line)
		}
	}
}

func (a *analysis) eligible(t trigger, conds []actionlint.ExprNode) bool {
	switch ev := t.ev.(type) {
	case *actionlint.WebhookEvent:
		switch t.name {
		case "pull_request":
			return true
		case "push":
			if ev.Branches.IsEmpty() || ev.Tags != nil || ev.TagsIgnore != nil || ev.BranchesIgnore != nil {
				return false
			}
			for _, b := range ev.Branches.Values {
				if b == nil || b.Value != a.pol.DefaultBranch {
					return false
				}
			}
			return true
		case "pull_request_target":
			for _, c := range conds {
				if isNotEquals(c, "github.event_name", "pull_request_target") {
					return true
				}
				if cmp, ok := c.(*actionlint.CompareOpNode); ok && cmp.Kind == actionlint.CompareOpNodeKindEq {
					for _, lit := range []actionlint.ExprNode{cmp.Left, cmp.Right} {
						if s, ok := lit.(*actionlint.StringNode); ok && !strings.EqualFold(s.Value, "pull_request_target") &&
							(isPath(cmp.Left, "github.event_name") || isPath(cmp.Right, "github.event_name")) {
							return true
						}
					}
				}
			}
			return false
		}
		return false
	case *actionlint.WorkflowDispatchEvent:
		return a.pol.AllowWorkflowDispatch
	}
	return false
}

// scopedEnvRules: no workflow- or job-level env on a licensed job.
func (a *analysis) scopedEnvRules(l *job) {
	for _, env := range []*actionlint.Env{l.wf.ast.Env, l.ast.Env} {
		if env == nil {
			continue
		}
		if env.Expression != nil {
			a.add(UnsafeUnityEditorCheck, l.wf.path, l.id, env.Expression.Pos.Line)
			continue
		}
		for _, v := range env.Vars {
			if v == nil || v.Name == nil {
				continue
			}
			val := ""
			if v.Value != nil {
				val = v.Value.Value
			}
			code := UnsafeUnityEditorCheck
			switch {
			case credNameRE.MatchString(v.Name.Value) || credentialRef(val):
				code = JobScopedUnityCredential
			case v.Name.Value == "NODE_OPTIONS":
				code = UnsafeNodeOptions
			case provisionKnobRE.MatchString(v.Name.Value):
				code = UnityEditorProvisioningControl
			}
			a.add(code, l.wf.path, l.id, v.Name.Pos.Line)
		}
	}
}

// preflightRule is rule 3.
func (a *analysis) preflightRule(l *job) {
	for _, d := range l.needsClosure() {
		if d.hosted() && d.firstOf(ActPreflight) != nil {
			return
		}
	}
	a.add(MissingRunnerPreflight, l.wf.path, l.id, l.line())
}

// credentialBefore returns the index of the first step before end that
// receives Unity credentials (or -1).
func credentialBefore(l *job, end int) int {
	for i := 0; i < end && i < len(l.steps); i++ {
		if l.steps[i].credential || l.steps[i].activation {
			return i
		}
	}
	return -1
}

var editorInputs = map[string]bool{"unity-version": true, "install-root": true, "provisioning-profile": true,
	"diagnostics-path": true, "ci-managed-only": true, "require-healthy-existing": true}

// editorRules is rule 4.
func (a *analysis) editorRules(l *job, ret *step) {
	w := l.wf
	gates := l.stepsOf(ActEditor)
	if len(gates) == 0 {
		a.add(MissingUnityEditorCheck, w.path, l.id, l.line())
		return
	}
	g := gates[0]
	if len(gates) > 1 {
		a.add(UnsafeUnityEditorCheck, w.path, l.id, gates[1].line())
	}
	okPos := g.idx == 0 || (g.idx == 1 && l.steps[0].is(ActGuard))
	if !okPos {
		c := credentialBefore(l, g.idx)
		acqIdx := -1
		for _, s := range l.acquires() {
			if s.idx < g.idx {
				acqIdx = s.idx
				break
			}
		}
		switch {
		case c >= 0 && (acqIdx < 0 || c < acqIdx):
			a.add(UnityEditorCheckAfterCredentials, w.path, l.id, g.line())
		case acqIdx >= 0:
			a.add(UnityEditorCheckAfterLock, w.path, l.id, g.line())
		default:
			a.add(UnsafeUnityEditorCheck, w.path, l.id, g.line())
		}
	}
	if n, ok := literalInt(rawGet(g.raw, "timeout-minutes")); !ok || n < 1 || n > 10 {
		a.add(UnboundedUnityEditorCheck, w.path, l.id, g.line())
	}
	if !editorShape(g, ret, l) {
		a.add(UnsafeUnityEditorCheck, w.path, l.id, g.line())
	}
}

// editorShape checks the gate's fixed inputs.
func editorShape(g, ret *step, l *job) bool {
	if g.hasIf || g.ast.ContinueOnError != nil {
		return false
	}
	for k := range g.with {
		if !editorInputs[k] {
			return false
		}
	}
	if strings.TrimSpace(g.with["ci-managed-only"]) != "true" || strings.TrimSpace(g.with["require-healthy-existing"]) != "true" ||
		strings.TrimSpace(g.with["diagnostics-path"]) != "unity-editor-check.json" {
		return false
	}
	ps, err := parseTemplate(strings.TrimSpace(g.with["install-root"]))
	if err != nil || len(ps) != 2 || ps[0].expr == nil || !isPath(ps[0].expr, "runner.tool_cache") || ps[1].lit != `\u6-v3` {
		return false
	}
	version := strings.TrimSpace(g.with["unity-version"])
	if version == "" || (ret != nil && !sameValue(version, ret.with["unity-version"])) {
		return false
	}
	return profileOK(strings.TrimSpace(g.with["provisioning-profile"]), l)
}

// profileOK: EditorOnly, or an expression mapping matrix.test-mode
// editmode/playmode → EditorOnly and standalone → StandaloneWindowsIl2Cpp,
// checked by evaluating it for every test mode the matrix declares.
func profileOK(v string, l *job) bool {
	if v == "EditorOnly" {
		return true
	}
	e := singleExpr(v)
	if e == nil {
		return false
	}
	want := map[string]string{"editmode": "EditorOnly", "playmode": "EditorOnly", "standalone": "StandaloneWindowsIl2Cpp"}
	modes := matrixValues(l, "test-mode")
	if len(modes) == 0 {
		return false
	}
	for _, m := range modes {
		expected, ok := want[m]
		if !ok {
			return false
		}
		got, err := eval(e, map[string]string{"matrix.test-mode": m})
		if err != nil || got.kind != 's' || got.s != expected {
			return false
		}
	}
	return true
}

// matrixValues returns the literal string values of a matrix row.
func matrixValues(l *job, name string) []string {
	rows := rawPath(l.raw, "strategy", "matrix")
	row := rawGet(rows, name)
	var out []string
	if row != nil && row.Kind == yaml.SequenceNode {
		for _, c := range row.Content {
			if c.Kind != yaml.ScalarNode {
				return nil
			}
			out = append(out, c.Value)
		}
	}
	if inc := rawGet(rows, "include"); inc != nil && inc.Kind == yaml.SequenceNode {
		for _, c := range inc.Content {
			if v := rawGet(c, name); v != nil && v.Kind == yaml.ScalarNode {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// validGuard checks a require-current-pr-head step's fixed shape.
func (a *analysis) validGuard(s *step) bool {
	return !s.hasIf && s.ast.ContinueOnError == nil &&
		exprIsPath(s.with["github-token"], "github.token") &&
		exprIsPath(s.with["pull-request-number"], "github.event.pull_request.number") &&
		exprIsPath(s.with["expected-head-sha"], "github.event.pull_request.head.sha")
}

// guardRules is rule 5, for workflows a pull request can start.
func (a *analysis) guardRules(l *job, acq *step) {
	prTriggered := false
	for _, t := range l.wf.triggers(map[*workflow]bool{}) {
		if t.name == "pull_request" || t.name == "pull_request_target" {
			prTriggered = true
		}
	}
	if !prTriggered {
		return
	}
	w := l.wf
	for _, g := range l.stepsOf(ActGuard) {
		if !a.validGuard(g) {
			a.add(InvalidCurrentHeadGuard, w.path, l.id, g.line())
		}
	}
	initial := len(l.steps) > 0 && l.steps[0].is(ActGuard) ||
		len(l.steps) > 1 && l.steps[0].is(ActEditor) && l.steps[1].is(ActGuard)
	if !initial {
		a.add(MissingInitialCurrentHeadGuard, w.path, l.id, l.line())
	}
	if acq == nil {
		return
	}
	tok, num, sha := acq.with["github-token"], acq.with["pull-request-number"], acq.with["expected-head-sha"]
	switch {
	case strings.TrimSpace(tok+num+sha) == "":
		a.add(MissingPreLockCurrentHeadGuard, w.path, l.id, acq.line())
	case !exprIsPath(tok, "github.token") || !exprIsPath(num, "github.event.pull_request.number") ||
		!exprIsPath(sha, "github.event.pull_request.head.sha"):
		a.add(InvalidAcquirePRHeadRevalidation, w.path, l.id, acq.line())
	}
}

// guarded reports whether s's if has the conjunct
// steps.<acq>.outputs.acquired == 'true'.
func guarded(s *step, acq *step) bool {
	for _, c := range s.conds() {
		if isEquals(c, "steps."+strings.ToLower(acq.id)+".outputs.acquired", "true") {
			return true
		}
	}
	return false
}

// alwaysAndAcquired reports whether s's if is exactly always() &&
// acquired == 'true' (in either order).
func alwaysAndAcquired(s *step, acq *step) bool {
	cs := s.conds()
	if len(cs) != 2 {
		return false
	}
	return (isAlways(cs[0]) || isAlways(cs[1])) && guarded(s, acq)
}

// onlyAlways reports whether s's if is exactly always().
func onlyAlways(s *step) bool {
	cs := s.conds()
	return len(cs) == 1 && isAlways(cs[0])
}

// activationRules is rule 6 (order) and rule 11 (licensed steps).
func (a *analysis) activationRules(l *job, acq, ret *step) {
	w := l.wf
	for _, s := range l.steps[:acq.idx] {
		if s.activation {
			a.add(AcquireAfterActivation, w.path, l.id, s.line())
		}
	}
	end := len(l.steps)
	if ret != nil && ret.idx > acq.idx {
		end = ret.idx
	}
	licensed := 0
	for _, s := range l.steps[acq.idx+1 : end] {
		if guarded(s, acq) {
			licensed++
			continue
		}
		if s.credential || s.activation {
			a.add(JobScopedUnityCredential, w.path, l.id, s.line())
		}
	}
	if licensed == 0 {
		a.add(MissingLicensedSteps, w.path, l.id, acq.line())
	}
}

var classifierBindings = []string{"return-log-path", "return-command-completed", "return-exit-code", "evidence-capture-complete", "return-log-digest"}

// suffixRules is rule 7: return, classifier, release and gate are the
// job's last four steps, each guarded and bound as documented.
func (a *analysis) suffixRules(l *job, acq *step) {
	w := l.wf
	ret, cls, rel, gate := l.firstOf(ActReturn), l.firstOf(ActClassifier), l.firstOf(ActRelease), l.firstOf(ActCleanupGate)
	ordered := true
	if ret == nil {
		a.add(MissingUnityReturn, w.path, l.id, l.line())
		ordered = false
	} else {
		if !alwaysAndAcquired(ret, acq) {
			a.add(UnityReturnNotAlways, w.path, l.id, ret.line())
		}
		if ls, ok := l.labels(); !ok || !hasLabel(ls, "self-hosted") || !hasLabel(ls, "windows") {
			a.add(UnsafeReturnExecutionEnvironment, w.path, l.id, ret.line())
		}
		if !floorOK(ret.raw, 5) {
			a.add(UnsafeCentralReturnSuffix, w.path, l.id, ret.line())
		}
	}
	if cls == nil {
		a.add(MissingCleanupClassifier, w.path, l.id, l.line())
		ordered = false
	} else {
		if !alwaysAndAcquired(cls, acq) {
			a.add(ClassifierNotAlways, w.path, l.id, cls.line())
		}
		if ret != nil {
			if cls.idx < ret.idx {
				a.add(ClassifierBeforeUnityReturn, w.path, l.id, cls.line())
				ordered = false
			}
			for _, in := range classifierBindings {
				if !exprIsPath(cls.with[in], "steps."+strings.ToLower(ret.id)+".outputs."+in) || ret.id == "" {
					a.add(ClassifierInputsNotTyped, w.path, l.id, cls.line())
					break
				}
			}
		}
		if !floorOK(cls.raw, 2) {
			a.add(UnsafeCentralReturnSuffix, w.path, l.id, cls.line())
		}
	}
	if rel == nil {
		a.add(MissingTypedRelease, w.path, l.id, l.line())
		ordered = false
	} else {
		if !onlyAlways(rel) {
			a.add(ReleaseNotAlways, w.path, l.id, rel.line())
		}
		if cls != nil {
			if rel.idx < cls.idx {
				a.add(ReleaseBeforeClassification, w.path, l.id, rel.line())
				ordered = false
			}
			if !releaseTyped(rel, cls, acq) {
				a.add(ReleaseInputsNotTyped, w.path, l.id, rel.line())
			}
		}
	}
	if gate == nil {
		a.add(MissingCleanupGate, w.path, l.id, l.line())
		ordered = false
	} else {
		if !onlyAlways(gate) || (gate.ast.ContinueOnError != nil && !isLiteralFalse(rawGet(gate.raw, "continue-on-error"))) {
			a.add(CleanupGateNotAlways, w.path, l.id, gate.line())
		}
		if rel != nil {
			if gate.idx < rel.idx {
				a.add(CleanupGateBeforeRelease, w.path, l.id, gate.line())
				ordered = false
			}
			if cls != nil && !gateTyped(gate, acq, cls, rel) {
				a.add(CleanupGateInputsNotTyped, w.path, l.id, gate.line())
			}
		}
	}
	n := len(l.steps)
	if ordered && !(ret.idx == n-4 && cls.idx == n-3 && rel.idx == n-2 && gate.idx == n-1) {
		a.add(UnsafeCentralReturnSuffix, w.path, l.id, ret.line())
	}
	if jt := rawGet(l.raw, "timeout-minutes"); jt != nil && !floorOK(l.raw, 5) {
		a.add(UnsafeCentralReturnSuffix, w.path, l.id, jt.Line)
	}
}

// floorOK: timeout-minutes absent, or a literal integer >= floor.
func floorOK(n *yaml.Node, floor int) bool {
	t := rawGet(n, "timeout-minutes")
	if t == nil {
		return true
	}
	v, ok := literalInt(t)
	return ok && v >= floor
}

func releaseTyped(rel, cls, acq *step) bool {
	out := "steps." + strings.ToLower(cls.id) + ".outputs."
	if cls.id == "" || strings.TrimSpace(rel.with["resource-safe"]) != "" || strings.TrimSpace(rel.with["holder-id"]) != "" {
		return false
	}
	for _, k := range []string{"resource-cleanup-status", "resource-health", "resource-reason"} {
		if !exprIsPath(rel.with[k], out+k) {
			return false
		}
	}
	return sameIdentity(rel, acq)
}

// sameIdentity: release names the same lock, holder suffix, runner and
// lock repository as acquire.
func sameIdentity(rel, acq *step) bool {
	for _, k := range []string{"lock-name", "holder-id-suffix", "runner-id", "lock-repository", "state-branch"} {
		if strings.TrimSpace(rel.with[k]) == "" && strings.TrimSpace(acq.with[k]) == "" {
			continue
		}
		if !sameValue(rel.with[k], acq.with[k]) {
			return false
		}
	}
	return true
}

func gateTyped(gate, acq, cls, rel *step) bool {
	if rel.id == "" {
		return false
	}
	a := "steps." + strings.ToLower(acq.id) + ".outputs."
	c := "steps." + strings.ToLower(cls.id) + ".outputs."
	r := "steps." + strings.ToLower(rel.id)
	want := map[string]string{
		"acquired":                a + "acquired",
		"classification-complete": c + "classification-complete",
		"cleanup-status":          c + "resource-cleanup-status",
		"cleanup-health":          c + "resource-health",
		"cleanup-reason":          c + "resource-reason",
		"release-outcome":         r + ".outcome",
		"cleanup-result":          r + ".outputs.cleanup-result",
		"released":                r + ".outputs.released",
		"release-health":          r + ".outputs.resource-health",
		"release-reason":          r + ".outputs.resource-reason",
		"reservation-state":       r + ".outputs.reservation-state",
		"reservation-id":          r + ".outputs.reservation-id",
		"incident-id":             r + ".outputs.incident-id",
	}
	for k, p := range want {
		if !exprIsPath(gate.with[k], p) {
			return false
		}
	}
	return len(gate.with) == len(want)
}

// ---- rule 8: the hosted fallback cleanup ----

// fallbackRules checks, for licensed job l, that a fallback job needs it
// and releases its exact holder identity.
func (a *analysis) fallbackRules(l *job, acq *step) {
	w := l.wf
	var fbs []*job
	for _, j := range w.jobs {
		if j.fallback && j.needsDirect(l.id) {
			fbs = append(fbs, j)
		}
	}
	if len(fbs) == 0 {
		a.add(InvalidFallbackRelease, w.path, l.id, l.line())
		return
	}
	for _, f := range fbs {
		if !a.fallbackIdentity(f, l, acq) {
			a.add(InvalidFallbackRelease, w.path, f.id, f.line())
		}
	}
}

func (a *analysis) fallbackIdentity(f, l *job, acq *step) bool {
	rels := f.stepsOf(ActRelease)
	if len(rels) != 1 {
		return false
	}
	r := rels[0]
	suffix := acq.with["holder-id-suffix"]
	if strings.TrimSpace(suffix) == "" {
		suffix = "default"
	}
	cs, ok := canonical(strings.TrimSpace(suffix))
	if !ok {
		return false
	}
	want := "${{github.repository}}:${{github.run_id}}:" + l.id + ":" + cs
	if got, ok := canonical(strings.TrimSpace(r.with["holder-id"])); !ok || got != want {
		return false
	}
	if strings.TrimSpace(r.with["resource-cleanup-status"]) != "unknown" || strings.TrimSpace(r.with["resource-health"]) != "healthy" ||
		strings.TrimSpace(r.with["resource-reason"]) != "return-terminated" || strings.TrimSpace(r.with["resource-safe"]) != "" {
		return false
	}
	if !sameValue(r.with["lock-name"], acq.with["lock-name"]) || !exprIsPath(r.with["runner-id"], "runner.name") {
		return false
	}
	for _, k := range []string{"lock-repository", "state-branch"} {
		if (strings.TrimSpace(r.with[k]) != "" || strings.TrimSpace(acq.with[k]) != "") && !sameValue(r.with[k], acq.with[k]) {
			return false
		}
	}
	if r.hasIf && !onlyAlways(r) {
		return false
	}
	if strings.Contains(cs, "${{matrix.") && !sameMatrix(f, l) {
		return false
	}
	if r.id == "" || f.ast.Outputs == nil {
		return false
	}
	out, ok := f.ast.Outputs["cleanup-result"]
	return ok && out != nil && out.Value != nil && exprIsPath(out.Value.Value, "steps."+strings.ToLower(r.id)+".outputs.cleanup-result")
}

// sameMatrix reports whether two jobs declare the same matrix.
func sameMatrix(a, b *job) bool {
	ma, mb := rawPath(a.raw, "strategy", "matrix"), rawPath(b.raw, "strategy", "matrix")
	if ma == nil || mb == nil {
		return false
	}
	ea, err1 := yaml.Marshal(ma)
	eb, err2 := yaml.Marshal(mb)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}

// fallbackShape checks a fallback job on its own: hosted, always, one
// step, timeouts, no env, container or environment.
func (a *analysis) fallbackShape(f *job) {
	w := f.wf
	if ls, ok := f.labels(); !ok || len(ls) != 1 || ls[0] != "ubuntu-latest" {
		a.add(FallbackCleanupNotHosted, w.path, f.id, f.line())
	}
	conds, present, valid := f.jobConds()
	always := false
	for _, c := range conds {
		if isAlways(c) {
			always = true
		}
	}
	if !present || !valid || !always {
		a.add(FallbackCleanupNotAlways, w.path, f.id, f.line())
	}
	for _, s := range f.steps {
		if !s.is(ActRelease) {
			a.add(UnexpectedFallbackStep, w.path, f.id, s.line())
		} else if !floorOK(s.raw, 5) {
			a.add(InvalidFallbackTimeout, w.path, f.id, s.line())
		}
		if s.nodeOptions {
			a.add(UnsafeNodeOptions, w.path, f.id, s.line())
		}
	}
	if t := rawGet(f.raw, "timeout-minutes"); t != nil && !floorOK(f.raw, 5) {
		a.add(InvalidFallbackTimeout, w.path, f.id, t.Line)
	}
	if f.ast.Env != nil {
		a.add(JobScopedUnityCredential, w.path, f.id, f.line())
	}
	if f.ast.Container != nil || f.ast.Services != nil {
		a.add(UnsafeJobContainer, w.path, f.id, f.line())
	}
	if f.ast.Environment != nil {
		a.add(ApprovalEnvironment, w.path, f.id, f.ast.Environment.Pos.Line)
	}
}

// ---- rule 9: the aggregate ----

func needsResult(s, id string) bool { return exprIsPath(s, "needs."+strings.ToLower(id)+".result") }

func (a *analysis) aggregateRules(l *job) {
	w := l.wf
	var agg *job
	var v *step
	for _, j := range w.jobs {
		for _, s := range j.stepsOf(ActValidation) {
			if needsResult(s.with["unity-result"], l.id) {
				agg, v = j, s
			}
		}
	}
	if agg == nil || !a.aggregateShape(agg, v, l) {
		line := l.line()
		if agg != nil {
			line = v.line()
		}
		a.add(MissingUnityAggregate, w.path, l.id, line)
		return
	}
	var fbs []*job
	for _, j := range w.jobs {
		if j.fallback && j.needsDirect(l.id) {
			fbs = append(fbs, j)
		}
	}
	for _, f := range fbs {
		if !agg.needsDirect(f.id) || !needsResult(v.with["fallback-result"], f.id) ||
			!exprIsPath(v.with["fallback-cleanup-result"], "needs."+strings.ToLower(f.id)+".outputs.cleanup-result") {
			a.add(MissingFallbackAggregate, w.path, f.id, v.line())
		}
	}
}

func (a *analysis) aggregateShape(agg *job, v *step, l *job) bool {
	conds, present, valid := agg.jobConds()
	if !present || !valid || len(conds) != 1 || !isAlways(conds[0]) || agg.ast.ContinueOnError != nil || !agg.hosted() {
		return false
	}
	if v.hasIf || v.ast.ContinueOnError != nil || !agg.needsDirect(l.id) {
		return false
	}
	preflight := false
	for _, j := range l.wf.jobs {
		if j.hosted() && j.firstOf(ActPreflight) != nil && needsResult(v.with["preflight-result"], j.id) && agg.needsDirect(j.id) {
			preflight = true
		}
	}
	if !preflight {
		return false
	}
	classified := strings.TrimSpace(v.with["classifier-result"]) == "success" && strings.TrimSpace(v.with["unity-required"]) == "true"
	for _, j := range l.wf.jobs {
		if j.firstOf(ActClassifyChanges) != nil && agg.needsDirect(j.id) && needsResult(v.with["classifier-result"], j.id) &&
			exprIsPath(v.with["unity-required"], "needs."+strings.ToLower(j.id)+".outputs.unity-required") {
			classified = true
		}
	}
	if !classified {
		return false
	}
	static := false
	for _, j := range l.wf.jobs {
		if agg.needsDirect(j.id) && needsResult(v.with["static-validation-result"], j.id) {
			static = true
		}
	}
	return static && trustBound(v.with["trusted-revision"], l, agg)
}

// trustBound: trusted-revision is an expression that the licensed job's
// if also requires (the same expression as a conjunct, or a needed job's
// output compared with 'true').
func trustBound(tr string, l, agg *job) bool {
	e := singleExpr(tr)
	if e == nil {
		return false
	}
	conds, _, valid := l.jobConds()
	if !valid {
		return false
	}
	want := render(e)
	for _, c := range conds {
		if render(c) == want {
			return true
		}
		if strings.HasPrefix(want, "needs.") && isEquals(c, want, "true") {
			id := strings.Split(want, ".")[1]
			return agg.needsDirect(id) && l.needsDirect(id)
		}
	}
	return false
}

// ---- rule 11: exceptions ----

func (a *analysis) activeException(p string) (registry.Exception, bool) {
	for _, e := range a.pol.Exceptions {
		if e.Path == p && !e.Expired(a.pol.Now) {
			return e, true
		}
	}
	return registry.Exception{}, false
}

func (a *analysis) expiredException(p string) bool {
	for _, e := range a.pol.Exceptions {
		if e.Path == p && e.Expired(a.pol.Now) {
			return true
		}
	}
	return false
}

func (a *analysis) exceptionRules() {
	for _, e := range a.pol.Exceptions {
		w, ok := a.wfByPath[e.Path]
		if e.Expired(a.pol.Now) {
			a.add(ExpiredPolicyException, e.Path, "", 0)
			continue
		}
		useful := false
		if ok && !w.broken {
			for _, j := range w.jobs {
				if j.marker && !j.paid && !j.fallback {
					useful = true
				}
			}
		}
		if !useful {
			a.add(StalePolicyException, e.Path, "", 0)
		}
	}
}
