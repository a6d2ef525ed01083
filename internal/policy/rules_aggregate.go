package policy

import (
	"strings"
)

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
// output compared with 'true'), and that expression (or that output's) is
// a trust decision: the pull request head's repository compared with this
// one, never the actor who triggered the run (trustExpression).
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
			return trustExpression(e)
		}
		if strings.HasPrefix(want, "needs.") && isEquals(c, want, "true") {
			parts := strings.Split(want, ".")
			id := parts[1]
			if !agg.needsDirect(id) || !l.needsDirect(id) || len(parts) != 4 || parts[2] != "outputs" {
				return false
			}
			return outputIsTrust(l.wf, id, parts[3])
		}
	}
	return false
}

// outputIsTrust reports whether job id of w outputs name as a trust
// expression (trustExpression).
func outputIsTrust(w *workflow, id, name string) bool {
	src := w.byID[strings.ToLower(id)]
	if src == nil || src.ast == nil {
		return false
	}
	for n, out := range src.ast.Outputs {
		if strings.EqualFold(n, name) && out != nil && out.Value != nil {
			oe := singleExpr(out.Value.Value)
			return oe != nil && trustExpression(oe)
		}
	}
	return false
}
