package policy

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
)

// workflow is one parsed workflow file (or remote reusable workflow).
type workflow struct {
	path    string // ".github/workflows/x.yml", or "owner/repo/path@sha" for a remote one
	remote  *usesRef
	ast     *actionlint.Workflow
	raw     *yaml.Node
	broken  bool // actionlint could not parse it (beyond the values the rules read raw)
	errLine int
	jobs    []*job
	byID    map[string]*job // lowercase id
	callers []*job
}

// job is one job of a workflow with the facts the rules use.
type job struct {
	wf    *workflow
	id    string
	ast   *actionlint.Job
	raw   *yaml.Node
	steps []*step

	call       *usesRef  // jobs.<id>.uses
	callee     *workflow // resolved callee
	unresolved bool      // the callee could not be read (or is mutable)

	paid, fallback, marker bool
	class                  Class
}

func (j *job) line() int {
	if j.ast != nil && j.ast.ID != nil && j.ast.ID.Pos != nil {
		return j.ast.ID.Pos.Line
	}
	return 0
}

// step is one step with its classified facts (own and, for a local
// composite action, its transitive content).
type step struct {
	idx  int
	ast  *actionlint.Step
	raw  *yaml.Node
	id   string
	uses *usesRef
	lock string // lock action name when from the lock repository
	with map[string]string
	env  map[string]string
	run  string

	hasIf  bool
	ifExpr actionlint.ExprNode
	ifOK   bool

	credential     bool // receives Unity credentials
	activation     bool // can activate Unity
	unityStart     bool // can start the Unity editor (unitystart.go)
	marker         bool // Unity-shaped, review required
	nodeOptions    bool
	provisioning   bool // installs editors
	provisionKnob  bool // sets a provisioning variable
	compositeLocks []string
}

func (s *step) line() int {
	if s.ast != nil && s.ast.Pos != nil {
		return s.ast.Pos.Line
	}
	return 0
}

// conds returns the step's if conjuncts (nil when absent or not a guard).
func (s *step) conds() []actionlint.ExprNode {
	if !s.hasIf || !s.ifOK {
		return nil
	}
	return conjuncts(s.ifExpr)
}

func (s *step) is(name string) bool { return s.lock == name }

// action is a parsed local composite (or other local) action.
type action struct {
	path   string
	broken bool
	steps  []compStep
	image  string // runs.image (docker actions)
	line   int
}

type compStep struct {
	line  int
	uses  *usesRef
	run   string
	shell string
	env   map[string]string
	with  map[string]string
}

var (
	unityScriptRE   = regexp.MustCompile(`(?i)(unity\.exe|unity\.app|\bunityhub\b|unity hub|-batchmode|-projectpath\b|-manuallicensefile|-returnlicense|-serial\b)`)
	activateRE      = regexp.MustCompile(`(?i)(-serial\b|-manuallicensefile|-username\b)`)
	provisionRE     = regexp.MustCompile(`(?i)(unityhub|unity hub|--headless\s+install|install-modules|ensure-editor\.ps1|unitysetup|unitydownloadassistant|unity-installer)`)
	provisionKnobRE = regexp.MustCompile(`^(UNITY_EDITOR_INSTALL_ROOT|UNITY_EDITOR_PROVISION|ENSURE_UNITY_EDITOR|UNITY_HUB|UNITY_INSTALL)`)
	credNameRE      = unityCredNameRE
)

// credentialRef reports whether a value references a Unity secret
// (secrets.UNITY_*), structurally.
func credentialRef(s string) bool {
	for _, r := range contextRefs(s) {
		if name, ok := strings.CutPrefix(r, "secrets."); ok && credNameRE.MatchString(strings.ToUpper(name)) {
			return true
		}
	}
	return false
}

// lifecycleLocks are the lock actions whose order the rules check in the
// job itself; one inside a local composite action cannot be checked.
var lifecycleLocks = map[string]bool{ActAcquire: true, ActAcquireWithCleanup: true, ActRelease: true, ActReturn: true,
	ActClassifier: true, ActCleanupGate: true, ActEditor: true, ActGuard: true, ActValidateLicense: true, ActReap: true, ActRecover: true}

// analysis holds one Analyze call.
type analysis struct {
	snap     Snapshot
	pol      Policy
	lockRepo string
	wfs      []*workflow
	wfByPath map[string]*workflow
	actions  map[string]*action // by directory
	findings []Finding
	rows     []InventoryRow
}

func (a *analysis) add(code Code, p, jobID string, line int) {
	a.findings = append(a.findings, Finding{Code: code, Path: p, Job: jobID, Line: line})
}

func (a *analysis) addDetail(code Code, p, jobID string, line int, detail string) {
	a.findings = append(a.findings, Finding{Code: code, Path: p, Job: jobID, Line: line, Detail: detail})
}

// claimedKeys are the keys whose values the rules read from the raw YAML;
// actionlint's refusal of a look-alike there is the rule's finding, not a
// parse failure.
var claimedKeys = map[string]bool{"cancel-in-progress": true, "fail-fast": true, "timeout-minutes": true}

func claimedPositions(n *yaml.Node, out map[pos]bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if claimedKeys[n.Content[i].Value] {
				out[nodePos(n.Content[i+1])] = true
			}
		}
	}
	for _, c := range n.Content {
		claimedPositions(c, out)
	}
}

// parseWorkflow parses src with actionlint and pairs it with the raw tree.
func parseWorkflow(p string, src []byte) (wf *workflow) {
	wf = &workflow{path: p, byID: map[string]*job{}}
	defer func() {
		if r := recover(); r != nil {
			wf.broken, wf.errLine, wf.ast = true, 1, nil
		}
	}()
	ast, errs := actionlint.Parse(src)
	wf.ast = ast
	wf.raw = rawRoot(src)
	if ast == nil || wf.raw == nil {
		wf.broken, wf.errLine = true, 1
		for _, e := range errs {
			wf.errLine = max(e.Line, 1)
			break
		}
		return wf
	}
	claimed := map[pos]bool{}
	claimedPositions(wf.raw, claimed)
	for _, e := range errs {
		if !claimed[pos{e.Line, e.Column}] {
			wf.broken, wf.errLine = true, max(e.Line, 1)
			return wf
		}
	}
	if len(ast.Jobs) == 0 || len(ast.On) == 0 {
		wf.broken, wf.errLine = true, 1
		return wf
	}
	rawJobs := rawGet(wf.raw, "jobs")
	for _, j := range ast.Jobs {
		if j == nil || j.ID == nil {
			continue
		}
		jm := &job{wf: wf, id: j.ID.Value, ast: j, raw: rawGet(rawJobs, j.ID.Value)}
		rawSteps := rawGet(jm.raw, "steps")
		for i, s := range j.Steps {
			jm.steps = append(jm.steps, newStep(i, s, rawIndex(rawSteps, i)))
		}
		if j.WorkflowCall != nil && j.WorkflowCall.Uses != nil {
			u := parseUses(j.WorkflowCall.Uses.Value)
			jm.call = &u
		}
		wf.jobs = append(wf.jobs, jm)
		wf.byID[strings.ToLower(jm.id)] = jm
	}
	sort.Slice(wf.jobs, func(i, k int) bool { return wf.jobs[i].line() < wf.jobs[k].line() })
	return wf
}

func newStep(i int, s *actionlint.Step, raw *yaml.Node) *step {
	st := &step{idx: i, ast: s, raw: raw, with: map[string]string{}, env: map[string]string{}}
	if s.ID != nil {
		st.id = s.ID.Value
	}
	if s.If != nil {
		st.hasIf = true
		st.ifExpr, st.ifOK = condition(s.If.Value)
	}
	if s.Env != nil {
		for _, v := range s.Env.Vars {
			if v != nil && v.Name != nil && v.Value != nil {
				st.env[v.Name.Value] = v.Value.Value
			}
		}
	}
	switch e := s.Exec.(type) {
	case *actionlint.ExecAction:
		if e.Uses != nil {
			u := parseUses(e.Uses.Value)
			st.uses = &u
		}
		for k, in := range e.Inputs {
			if in != nil && in.Value != nil {
				st.with[strings.ToLower(k)] = in.Value.Value
			}
		}
	case *actionlint.ExecRun:
		if e.Run != nil {
			st.run = e.Run.Value
		}
	}
	return st
}

// loadAction parses the local action in dir (cached).
func (a *analysis) loadAction(dir string) (*action, bool) {
	if act, ok := a.actions[dir]; ok {
		return act, act != nil
	}
	for _, name := range []string{"action.yml", "action.yaml"} {
		p := path.Join(dir, name)
		src, ok := a.snap.Files[p]
		if !ok {
			continue
		}
		act := parseAction(p, src)
		a.actions[dir] = act
		return act, true
	}
	a.actions[dir] = nil
	return nil, false
}

func parseAction(p string, src []byte) *action {
	act := &action{path: p}
	var md actionlint.ActionMetadata
	root := rawRoot(src)
	if root == nil || yaml.Unmarshal(src, &md) != nil {
		act.broken, act.line = true, 1
		return act
	}
	runs := rawGet(root, "runs")
	if runs == nil || md.Runs.Using == "" {
		act.broken, act.line = true, 1
		return act
	}
	act.image = md.Runs.Image
	steps := rawGet(runs, "steps")
	if steps == nil {
		return act
	}
	if steps.Kind != yaml.SequenceNode {
		act.broken, act.line = true, steps.Line
		return act
	}
	for _, sn := range steps.Content {
		if sn.Kind != yaml.MappingNode {
			act.broken, act.line = true, sn.Line
			return act
		}
		cs := compStep{line: sn.Line, env: scalarMap(rawGet(sn, "env")), with: scalarMap(rawGet(sn, "with"))}
		if u := rawGet(sn, "uses"); u != nil && u.Kind == yaml.ScalarNode {
			ref := parseUses(u.Value)
			cs.uses = &ref
		}
		if r := rawGet(sn, "run"); r != nil && r.Kind == yaml.ScalarNode {
			cs.run = r.Value
		}
		cs.shell = shellOf(sn)
		act.steps = append(act.steps, cs)
	}
	return act
}

func scalarMap(n *yaml.Node) map[string]string {
	out := map[string]string{}
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i+1].Kind == yaml.ScalarNode {
			out[n.Content[i].Value] = n.Content[i+1].Value
		}
	}
	return out
}

// isLockRef reports whether u is a reference into the lock repository.
func (a *analysis) isLockRef(u *usesRef) bool {
	return u != nil && u.kind == usesRemote && lowerEq(u.repository(), a.lockRepo)
}

// checkPin applies rule 1 to one remote or docker reference.
func (a *analysis) checkPin(u *usesRef, reusable bool, p, jobID string, line int) {
	switch u.kind {
	case usesDocker:
		if !u.pinned() {
			a.add(MutableActionRef, p, jobID, line)
		}
		return
	case usesRemote:
	default:
		return
	}
	if name := u.lockName(); name != "" && !a.isLockRef(u) {
		a.add(ForeignActionReference, p, jobID, line)
		return
	}
	acquire := a.isLockRef(u) && (u.lockName() == ActAcquire || u.lockName() == ActAcquireWithCleanup)
	if !u.pinned() {
		switch {
		case acquire:
			a.add(MutableAcquireRef, p, jobID, line)
		case reusable:
			a.add(MutableReusableRef, p, jobID, line)
		default:
			a.add(MutableActionRef, p, jobID, line)
		}
		return
	}
	if !a.isLockRef(u) || a.pol.ApprovedLockShas == nil {
		return
	}
	switch {
	case !contains(a.pol.ApprovedLockShas, u.ref) && acquire:
		a.add(UnapprovedAcquireRef, p, jobID, line)
	case !contains(a.pol.ApprovedLockShas, u.ref):
		a.add(UnapprovedLockRef, p, jobID, line)
	case u.lockName() == ActReturn && a.pol.ApprovedReturnShas != nil && !contains(a.pol.ApprovedReturnShas, u.ref):
		a.add(UnapprovedLockRef, p, jobID, line)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// classifyStep fills a step's facts, following a local action
// transitively (pins inside it are checked here).
func (a *analysis) classifyStep(j *job, s *step) {
	if s.uses != nil && a.isLockRef(s.uses) {
		s.lock = s.uses.lockName()
		if s.lock == "" {
			s.lock = "?" // a lock-repository reference to something that is not a lock action
		}
	}
	s.inputFacts(s.env, s.with)
	a.scriptFacts(s, s.run)
	if s.uses != nil {
		switch {
		case s.uses.kind == usesLocal:
			a.expandLocal(j, s, s.uses.path, j.wf.path, s.line(), map[string]bool{})
		case s.uses.isGameCIUnity():
			s.activation, s.marker = true, true
		case s.lock == "" && s.uses.unityShaped():
			s.marker = true
		}
	}
	if s.credential && s.lock != ActValidateLicense && s.lock != ActReturn {
		s.activation = true
	}
}

// inputFacts merges what an env: and a with: mapping (of the step or of a
// step inside its composite action) give the step.
func (s *step) inputFacts(env, with map[string]string) {
	for name, v := range env {
		if credNameRE.MatchString(name) || credentialRef(v) {
			s.credential = true
		}
		if name == "NODE_OPTIONS" {
			s.nodeOptions = true
		}
		if provisionKnobRE.MatchString(name) {
			s.provisionKnob = true
		}
	}
	for _, v := range with {
		if credentialRef(v) {
			s.credential = true
		}
	}
	for _, v := range env {
		if editorPathOutRE.MatchString(v) {
			s.unityStart = true // a script given the editor's path
		}
	}
	for _, v := range with {
		if editorPathOutRE.MatchString(v) {
			s.unityStart = true
		}
	}
}

// scriptFacts merges what a run: script gives the step.
func (a *analysis) scriptFacts(s *step, run string) {
	if run == "" {
		return
	}
	if credentialRef(run) {
		s.credential = true
	}
	if unityScriptRE.MatchString(run) {
		s.marker = true
		if activateRE.MatchString(run) {
			s.activation = true
		}
	}
	if startsUnity(run) {
		s.unityStart, s.marker = true, true
	}
	if provisionRE.MatchString(run) {
		s.provisioning = true
	}
	if strings.Contains(run, "NODE_OPTIONS") {
		s.nodeOptions = true
	}
}

// expandLocal follows the local action in dir, merging its facts into s.
func (a *analysis) expandLocal(j *job, s *step, dir, from string, line int, seen map[string]bool) {
	if seen[dir] {
		return
	}
	seen[dir] = true
	if a.isWorkflowPath(dir) {
		return
	}
	act, ok := a.loadAction(dir)
	if !ok {
		a.addDetail(RepositoryAnalysisIncomplete, from, "", line, "missing-local-action")
		return
	}
	if act.broken {
		a.addDetail(RepositoryAnalysisIncomplete, act.path, "", act.line, "parse-error")
		return
	}
	if strings.HasPrefix(act.image, "docker://") {
		u := parseUses(act.image)
		a.checkPin(&u, false, act.path, "", act.line)
	}
	for _, cs := range act.steps {
		s.inputFacts(cs.env, cs.with)
		a.scriptFacts(s, cs.run)
		a.stepHygiene(act.path, "", cs.line, cs.run, cs.shell, cs.uses, cs.with, false)
		if cs.uses == nil {
			continue
		}
		u := cs.uses
		switch u.kind {
		case usesLocal:
			a.expandLocal(j, s, u.path, act.path, cs.line, seen)
		case usesRemote, usesDocker:
			a.checkPin(u, false, act.path, "", cs.line)
			if a.isLockRef(u) {
				name := u.lockName()
				s.compositeLocks = append(s.compositeLocks, name)
				if lifecycleLocks[name] {
					s.marker = true
					a.add(UnreviewedUnityReference, act.path, "", cs.line)
				}
			} else if u.isGameCIUnity() {
				s.activation, s.marker = true, true
			} else if u.unityShaped() {
				s.marker = true
			}
		default:
			a.addDetail(RepositoryAnalysisIncomplete, act.path, "", cs.line, "invalid-uses")
		}
	}
}

func (a *analysis) isWorkflowPath(p string) bool {
	return strings.HasPrefix(p, ".github/workflows/")
}

// stepsOf returns the job's steps that use lock action name.
func (j *job) stepsOf(name string) []*step {
	var out []*step
	for _, s := range j.steps {
		if s.is(name) {
			out = append(out, s)
		}
	}
	return out
}

func (j *job) firstOf(name string) *step {
	if ss := j.stepsOf(name); len(ss) > 0 {
		return ss[0]
	}
	return nil
}

func (j *job) acquires() []*step {
	return append(j.stepsOf(ActAcquire), j.stepsOf(ActAcquireWithCleanup)...)
}

// needsClosure returns every job j needs, transitively.
func (j *job) needsClosure() map[string]*job {
	out := map[string]*job{}
	var walk func(*job)
	walk = func(x *job) {
		if x.ast == nil {
			return
		}
		for _, n := range x.ast.Needs {
			if n == nil {
				continue
			}
			d, ok := j.wf.byID[strings.ToLower(n.Value)]
			if !ok || out[strings.ToLower(n.Value)] != nil {
				continue
			}
			out[strings.ToLower(n.Value)] = d
			walk(d)
		}
	}
	walk(j)
	return out
}

// needsDirect reports whether j lists id in needs.
func (j *job) needsDirect(id string) bool {
	if j.ast == nil {
		return false
	}
	for _, n := range j.ast.Needs {
		if n != nil && strings.EqualFold(n.Value, id) {
			return true
		}
	}
	return false
}

// jobConds returns the job's if conjuncts (nil when absent or invalid).
func (j *job) jobConds() ([]actionlint.ExprNode, bool, bool) {
	if j.ast == nil || j.ast.If == nil {
		return nil, false, true
	}
	e, ok := condition(j.ast.If.Value)
	if !ok {
		return nil, true, false
	}
	return conjuncts(e), true, true
}

// labels returns the literal runs-on labels; ok false when runs-on is an
// expression, has a group, or a label holds an expression.
func (j *job) labels() ([]string, bool) {
	if j.ast == nil || j.ast.RunsOn == nil || j.ast.RunsOn.LabelsExpr != nil || j.ast.RunsOn.Group != nil {
		return nil, false
	}
	var out []string
	for _, l := range j.ast.RunsOn.Labels {
		if l == nil || actionlint.ContainsExpression(l.Value) {
			return nil, false
		}
		out = append(out, l.Value)
	}
	return out, len(out) > 0
}

var hostedLabelRE = regexp.MustCompile(`^(ubuntu|windows|macos)-[a-z0-9.-]+$`)

// hosted reports whether the job runs on one GitHub-hosted label.
func (j *job) hosted() bool {
	ls, ok := j.labels()
	return ok && len(ls) == 1 && hostedLabelRE.MatchString(ls[0])
}

func hasLabel(ls []string, want string) bool {
	for _, l := range ls {
		if strings.EqualFold(l, want) {
			return true
		}
	}
	return false
}

// events returns the workflow's triggers, the callers' triggers in place
// of workflow_call (transitively).
type trigger struct {
	name string
	ev   actionlint.Event
	wf   *workflow
	line int
}

func (w *workflow) triggers(seen map[*workflow]bool) []trigger {
	if seen[w] || w.ast == nil {
		return nil
	}
	seen[w] = true
	var out []trigger
	for _, ev := range w.ast.On {
		if ev == nil {
			continue
		}
		name := ev.EventName()
		if name == "workflow_call" && len(w.callers) > 0 {
			for _, c := range w.callers {
				out = append(out, c.wf.triggers(seen)...)
			}
			continue
		}
		out = append(out, trigger{name: name, ev: ev, wf: w, line: eventLine(w, name)})
	}
	return out
}

func eventLine(w *workflow, name string) int {
	on := rawGet(w.raw, "on")
	if on == nil {
		return 1
	}
	if k := rawKey(on, name); k != nil {
		return k.Line
	}
	return on.Line
}

// canonical returns a template's canonical text (expressions rendered).
func canonical(s string) (string, bool) {
	ps, err := parseTemplate(s)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range ps {
		if p.expr != nil {
			b.WriteString("${{" + render(p.expr) + "}}")
		} else {
			b.WriteString(p.lit)
		}
	}
	return b.String(), true
}

// sameValue reports whether two input values are the same template.
func sameValue(a, b string) bool {
	ca, ok1 := canonical(strings.TrimSpace(a))
	cb, ok2 := canonical(strings.TrimSpace(b))
	return ok1 && ok2 && ca == cb
}

func (a *analysis) String() string { return fmt.Sprintf("analysis of %s", a.snap.Repository) }
