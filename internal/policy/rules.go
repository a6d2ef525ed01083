package policy

import (
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
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
	a.holderSuffixRules(l, acq)
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
		if s.activation || s.unityStart {
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
