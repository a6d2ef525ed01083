package policy

import (
	"strings"

	"go.yaml.in/yaml/v4"
)

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
