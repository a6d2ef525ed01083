package policy

import (
	"strings"

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
