package policy

import (
	"regexp"
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
)

// ---- rules 3 and 9: the jobs that decide whether licensed work runs ----

// The change classifier decides whether a pull request needs Unity at all
// and the preflight whether a runner exists; the aggregate trusts both. A
// classifier that cannot fail, runs in a container, reports a literal
// unity-required or reads its allowlist from the pull request lets a
// change skip licensed validation; a preflight that cannot fail proves
// nothing. These are the reference's shapes of the two jobs (it reports
// them as a missing aggregate or preflight; here each has its own code and
// a detail naming the broken part).

// Details of UnsafeUnityChangeClassifier and UnsafeRunnerPreflight.
const (
	gkContinueOnError = "continue-on-error"
	gkContainer       = "container"
	gkCondition       = "condition"
	gkActorCheck      = "actor-check"
	gkOutput          = "output-not-bound"
	gkInputs          = "inputs-not-event"
	gkPaths           = "independent-paths"
	gkExtraStep       = "extra-step"
	gkEnvironment     = "environment"
	gkNotHosted       = "not-hosted"
)

var classifyInputs = map[string]string{
	"event-name": "github.event_name",
	"base-sha":   "github.event.pull_request.base.sha",
	"head-sha":   "github.event.pull_request.head.sha",
}

// reservedUnityPrefixes are the folders Unity compiles or that hold the
// workflows: independent-paths may neither be inside nor contain them.
var reservedUnityPrefixes = []string{"Assets/", "Packages/", "ProjectSettings/", ".github/workflows/"}

var independentSegmentRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// gatekeeperRules checks every change-classifier and preflight job of a
// workflow that holds licensed work.
func (a *analysis) gatekeeperRules(w *workflow) {
	for _, j := range w.jobs {
		if j.firstOf(ActClassifyChanges) != nil {
			for _, d := range classifierProblems(j) {
				a.addDetail(UnsafeUnityChangeClassifier, w.path, j.id, j.line(), d)
			}
		}
		if j.firstOf(ActPreflight) != nil {
			for _, d := range preflightProblems(j) {
				a.addDetail(UnsafeRunnerPreflight, w.path, j.id, j.line(), d)
			}
		}
	}
}

// mayContinue reports whether a job or step node lets a failure pass
// (continue-on-error present and not the literal false).
func mayContinue(n *yaml.Node) bool {
	c := rawGet(n, "continue-on-error")
	return c != nil && !isLiteralFalse(c)
}

// actorRef reports whether an expression text (a condition, bare or in
// ${{ }}, or a template) decides by who triggered the
// run (github.actor, github.triggering_actor): a maintainer's re-run or a
// bot's rebase changes it, so it never establishes trust in the code.
func actorRef(s string) bool {
	refs := contextRefs(s)
	if e, ok := condition(s); ok && e != nil {
		refs = append(refs, contextRefsOf(e)...)
	}
	for _, r := range refs {
		if r == "github.actor" || r == "github.triggering_actor" || r == "github.actor_id" {
			return true
		}
	}
	return false
}

func condText(n *actionlint.String) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// classifierProblems returns what breaks the classifier job's shape: one
// hosted job without condition, container, continue-on-error or env, whose
// steps are checkouts and the classifier; the classifier bound to the
// event's name and commits, its allowlist a literal list of safe folders,
// and the job's unity-required output the classifier's.
func classifierProblems(j *job) []string {
	var out []string
	add := func(d string) {
		for _, x := range out {
			if x == d {
				return
			}
		}
		out = append(out, d)
	}
	if !j.hosted() {
		add(gkNotHosted)
	}
	if mayContinue(j.raw) {
		add(gkContinueOnError)
	}
	if j.ast.Container != nil || j.ast.Services != nil {
		add(gkContainer)
	}
	if j.ast.Env != nil {
		add(gkEnvironment)
	}
	if j.ast.If != nil {
		if actorRef(condText(j.ast.If)) {
			add(gkActorCheck)
		}
		add(gkCondition)
	}
	cls := j.firstOf(ActClassifyChanges)
	for _, s := range j.steps {
		if s == cls {
			continue
		}
		if s.uses == nil || !s.uses.isCheckout() {
			add(gkExtraStep)
		}
	}
	if len(j.stepsOf(ActClassifyChanges)) > 1 {
		add(gkExtraStep)
	}
	if mayContinue(cls.raw) {
		add(gkContinueOnError)
	}
	if cls.hasIf {
		if cls.ast.If != nil && actorRef(cls.ast.If.Value) {
			add(gkActorCheck)
		}
		add(gkCondition)
	}
	if len(cls.env) > 0 || (cls.ast != nil && cls.ast.Env != nil) {
		add(gkEnvironment)
	}
	for k, v := range cls.with {
		want, ok := classifyInputs[k]
		switch {
		case k == "independent-paths":
			if !validIndependentPaths(v) {
				add(gkPaths)
			}
		case !ok || !exprIsPath(v, want):
			add(gkInputs)
		}
	}
	for k := range classifyInputs {
		if _, ok := cls.with[k]; !ok {
			add(gkInputs)
		}
	}
	out1, ok := j.ast.Outputs["unity-required"]
	if cls.id == "" || !ok || out1 == nil || out1.Value == nil ||
		!exprIsPath(out1.Value.Value, "steps."+strings.ToLower(cls.id)+".outputs.unity-required") {
		add(gkOutput)
	}
	if tr, ok := j.ast.Outputs["trusted-revision"]; ok && tr != nil && tr.Value != nil && actorRef(tr.Value.Value) {
		add(gkActorCheck)
	}
	return out
}

// validIndependentPaths: a literal (never an expression: a value the pull
// request controls would let it declare its own changes independent) list
// of dir/** lines of safe segments, none inside or around a folder Unity
// compiles or the workflows.
func validIndependentPaths(v string) bool {
	if strings.Contains(v, "${{") || strings.Contains(v, "}}") {
		return false
	}
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		segs := strings.Split(line, "/")
		if len(segs) < 2 || segs[len(segs)-1] != "**" {
			return false
		}
		for _, s := range segs[:len(segs)-1] {
			if s == "." || s == ".." || !independentSegmentRE.MatchString(s) {
				return false
			}
		}
		prefix := strings.Join(segs[:len(segs)-1], "/") + "/"
		for _, r := range reservedUnityPrefixes {
			if strings.HasPrefix(prefix, r) || strings.HasPrefix(r, prefix) {
				return false
			}
		}
	}
	return true
}

// preflightProblems returns what breaks a preflight job's shape: it and
// its preflight step must fail the job when the check fails (no
// continue-on-error), run without container or step env, and run under a
// condition that never decides by actor; the preflight step itself runs
// unconditionally (or under always()).
func preflightProblems(j *job) []string {
	var out []string
	add := func(d string) {
		for _, x := range out {
			if x == d {
				return
			}
		}
		out = append(out, d)
	}
	if mayContinue(j.raw) {
		add(gkContinueOnError)
	}
	if j.ast.Container != nil || j.ast.Services != nil {
		add(gkContainer)
	}
	if j.ast.If != nil && actorRef(j.ast.If.Value) {
		add(gkActorCheck)
	}
	for _, p := range j.stepsOf(ActPreflight) {
		if mayContinue(p.raw) {
			add(gkContinueOnError)
		}
		if p.hasIf && !onlyAlways(p) {
			if p.ast.If != nil && actorRef(p.ast.If.Value) {
				add(gkActorCheck)
			}
			add(gkCondition)
		}
		if p.ast.Env != nil {
			add(gkEnvironment)
		}
	}
	return out
}

// trustExpression reports whether e is a trust decision the aggregate may
// rely on: it compares the pull request head's repository with this one
// (github.event.pull_request.head.repo.full_name == github.repository, in
// either order) and never looks at who triggered the run.
func trustExpression(e actionlint.ExprNode) bool {
	same := false
	actor := false
	actionlint.VisitExprNode(e, func(n, _ actionlint.ExprNode, entering bool) {
		if !entering {
			return
		}
		if c, ok := n.(*actionlint.CompareOpNode); ok && c.Kind == actionlint.CompareOpNodeKindEq {
			if (isPath(c.Left, "github.event.pull_request.head.repo.full_name") && isPath(c.Right, "github.repository")) ||
				(isPath(c.Right, "github.event.pull_request.head.repo.full_name") && isPath(c.Left, "github.repository")) {
				same = true
			}
		}
		switch r := render(n); r {
		case "github.actor", "github.triggering_actor", "github.actor_id":
			actor = true
		}
	})
	return same && !actor
}
