package policy

import (
	"regexp"
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
)

// ---- rule 7: return, classify, release, gate ----

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
		if !alwaysAndAcquired(ret, acq) || mayContinue(ret.raw) {
			a.add(UnityReturnNotAlways, w.path, l.id, ret.line())
		}
		if ls, ok := l.labels(); !ok || !hasLabel(ls, "self-hosted") || !hasLabel(ls, "windows") {
			a.add(UnsafeReturnExecutionEnvironment, w.path, l.id, ret.line())
		}
		if !leafExecution(ret) {
			a.addDetail(UnsafeReturnExecutionEnvironment, w.path, l.id, ret.line(), "step-environment")
		}
		if !returnTyped(ret) {
			a.add(UnityReturnInputsNotTyped, w.path, l.id, ret.line())
		}
		if !floorOK(ret.raw, 5) {
			a.add(UnsafeCentralReturnSuffix, w.path, l.id, ret.line())
		}
	}
	if cls == nil {
		a.add(MissingCleanupClassifier, w.path, l.id, l.line())
		ordered = false
	} else {
		if !alwaysAndAcquired(cls, acq) || mayContinue(cls.raw) {
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
		if !onlyAlways(rel) || mayContinue(rel.raw) {
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

// leafExecution reports whether a lock action step runs the pinned action
// as it is: no step env: (which reaches the action's process: PATH,
// NODE_OPTIONS, PSModulePath, a different TEMP), no working-directory or
// shell. The reference requires the same of the return step.
func leafExecution(s *step) bool {
	return rawGet(s.raw, "env") == nil && rawGet(s.raw, "working-directory") == nil && rawGet(s.raw, "shell") == nil
}

var (
	returnInputs     = map[string]bool{"unity-version": true, "tool-cache": true, "unity-email": true, "unity-password": true, "evidence-suffix": true, "editor-layout": true}
	unityVersionRE   = regexp.MustCompile(`^[0-9]{4}\.[0-9]+\.[0-9]+[abfp][0-9]+$`)
	evidenceSuffixRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// returnTyped reports whether the return step's inputs are the reviewed
// ones: only the action's six inputs (an editor-path or any other input is
// refused: the return decides the editor from the tool cache itself);
// tool-cache exactly ${{ runner.tool_cache }}; each credential exactly one
// ${{ secrets.<NAME> }}; editor-layout a literal layout; unity-version and
// evidence-suffix literals of their patterns or templates of matrix values
// only (no value a step, the event or the pull request controls).
func returnTyped(r *step) bool {
	for k := range r.with {
		if !returnInputs[k] {
			return false
		}
	}
	if !exprIsPath(r.with["tool-cache"], "runner.tool_cache") {
		return false
	}
	for _, k := range []string{"unity-email", "unity-password"} {
		e := singleExpr(r.with[k])
		if e == nil {
			return false
		}
		name, ok := strings.CutPrefix(render(e), "secrets.")
		if !ok || name == "" || strings.ContainsAny(name, ".[(") {
			return false
		}
	}
	if v, ok := r.with["editor-layout"]; ok && strings.TrimSpace(v) != "canonical" && strings.TrimSpace(v) != "ci-managed-alternate" {
		return false
	}
	if !matrixTemplateOr(r.with["unity-version"], unityVersionRE, false) {
		return false
	}
	if v, ok := r.with["evidence-suffix"]; ok && !matrixTemplateOr(v, evidenceSuffixRE, true) {
		return false
	}
	return true
}

// matrixTemplateOr reports whether v is a literal matching re, or a
// template whose every expression is a matrix value (with literal text
// around it when parts is set).
func matrixTemplateOr(v string, re *regexp.Regexp, parts bool) bool {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "${{") {
		return re.MatchString(v)
	}
	ps, err := parseTemplate(v)
	if err != nil || (!parts && len(ps) != 1) {
		return false
	}
	for _, p := range ps {
		if p.expr == nil {
			continue
		}
		if !isMatrixPath(p.expr) {
			return false
		}
	}
	return true
}

// isMatrixPath reports whether n is matrix.<axis>[.<property>...].
func isMatrixPath(n actionlint.ExprNode) bool {
	switch n.(type) {
	case *actionlint.ObjectDerefNode, actionlint.ObjectDerefNode, *actionlint.IndexAccessNode:
		return strings.HasPrefix(render(n), "matrix.")
	}
	return false
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
	}
	// Optional, as in the reference and the action: when given, bound to
	// release's output of the same name.
	optional := map[string]string{
		"reservation-state": r + ".outputs.reservation-state",
		"reservation-id":    r + ".outputs.reservation-id",
		"incident-id":       r + ".outputs.incident-id",
	}
	for k, p := range want {
		if !exprIsPath(gate.with[k], p) {
			return false
		}
	}
	for k, v := range gate.with {
		if _, ok := want[k]; ok {
			continue
		}
		if p, ok := optional[k]; !ok || !exprIsPath(v, p) {
			return false
		}
	}
	return true
}
