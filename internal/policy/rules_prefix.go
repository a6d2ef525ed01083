package policy

import (
	"strings"

	"go.yaml.in/yaml/v4"
)

// ---- rules 4 and 5: the editor gate and the current-head guard ----

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
