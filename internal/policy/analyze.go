package policy

import (
	"path"
	"sort"
	"strings"
)

// DefaultBranch is Policy.DefaultBranch when unset.
const DefaultBranch = "main"

// Analyze runs every consumer rule over one snapshot. It is pure and
// deterministic: the same snapshot and policy give the same Result. A file
// that cannot be parsed is a finding, never skipped.
func Analyze(s Snapshot, p Policy) Result {
	_, res := analyze(s, p)
	return res
}

// analyze is Analyze, keeping the analysis (MigrationPlan reads its
// workflows).
func analyze(s Snapshot, p Policy) (*analysis, Result) {
	if p.DefaultBranch == "" {
		p.DefaultBranch = DefaultBranch
	}
	a := &analysis{snap: s, pol: p, lockRepo: p.LockRepository, wfByPath: map[string]*workflow{}, actions: map[string]*action{}}
	for _, g := range s.Incomplete {
		a.addDetail(RepositoryRetrievalIncomplete, g.Path, "", 0, g.Reason)
	}
	for _, fp := range workflowFiles(s.Files) {
		a.addWorkflow(parseWorkflow(fp, s.Files[fp]))
	}
	a.link()
	for _, w := range a.wfs {
		if w.broken {
			a.addDetail(RepositoryAnalysisIncomplete, w.path, "", w.errLine, "parse-error")
			continue
		}
		for _, j := range w.jobs {
			for _, st := range j.steps {
				a.classifyStep(j, st)
				if st.uses != nil {
					a.checkPin(st.uses, false, w.path, j.id, st.line())
				}
			}
		}
	}
	a.classifyJobs()
	for _, w := range a.wfs {
		if w.broken {
			continue
		}
		a.workflowRules(w)
		a.hygieneRules(w, false)
	}
	a.exceptionRules()
	res := Result{Repository: s.Repository, Commit: s.Commit, Inventory: sortInventory(a.rows), Findings: sortFindings(a.findings)}
	if res.Inventory == nil {
		res.Inventory = []InventoryRow{}
	}
	if res.Findings == nil {
		res.Findings = []Finding{}
	}
	return a, res
}

// workflowFiles returns the workflow files GitHub loads: the top level of
// .github/workflows, .yml or .yaml.
func workflowFiles(files map[string][]byte) []string {
	var out []string
	for p := range files {
		if isWorkflowFile(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func isWorkflowFile(p string) bool {
	dir, file := path.Split(p)
	return dir == ".github/workflows/" && (strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml"))
}

func (a *analysis) addWorkflow(w *workflow) {
	a.wfs = append(a.wfs, w)
	a.wfByPath[w.path] = w
}

// link resolves every reusable-workflow call to its callee (local file,
// or a remote workflow the reader fetched at its pinned commit), adding
// remote callees to the analysis.
func (a *analysis) link() {
	for i := 0; i < len(a.wfs); i++ {
		w := a.wfs[i]
		if w.broken {
			continue
		}
		for _, j := range w.jobs {
			if j.call == nil {
				continue
			}
			a.resolveCall(w, j)
		}
	}
}

func (a *analysis) resolveCall(w *workflow, j *job) {
	u := *j.call
	line := j.line()
	switch {
	case u.kind == usesLocal && w.remote == nil:
		callee, ok := a.wfByPath[u.path]
		if !ok {
			a.add(UnresolvedReusableWorkflow, w.path, j.id, line)
			j.unresolved = true
			return
		}
		j.callee = callee
	case u.kind == usesLocal:
		// ./ inside a remote workflow is that workflow's repository at the
		// same commit.
		key := w.remote.owner + "/" + w.remote.repo + "/" + u.path + "@" + w.remote.ref
		a.remoteCallee(w, j, key, parseUses(key))
		return
	case u.kind == usesRemote && u.isWorkflow():
		if !u.pinned() {
			a.add(MutableReusableRef, w.path, j.id, line)
			j.unresolved = true
			return
		}
		a.checkPin(&u, true, w.path, j.id, line)
		a.remoteCallee(w, j, u.raw, u)
		return
	case strings.Contains(u.raw, "${{"):
		// hygieneRules reports it (expression-in-uses); never resolved.
		j.unresolved = true
		return
	default:
		a.addDetail(RepositoryAnalysisIncomplete, w.path, j.id, line, "invalid-uses")
		j.unresolved = true
		return
	}
	j.callee.callers = append(j.callee.callers, j)
}

func (a *analysis) remoteCallee(w *workflow, j *job, key string, u usesRef) {
	if callee, ok := a.wfByPath[key]; ok {
		j.callee = callee
		callee.callers = append(callee.callers, j)
		return
	}
	src, ok := a.snap.Remote[key]
	if !ok {
		a.add(UnresolvedReusableWorkflow, w.path, j.id, j.line())
		j.unresolved = true
		return
	}
	callee := parseWorkflow(key, src)
	callee.remote = &u
	a.addWorkflow(callee)
	j.callee = callee
	callee.callers = append(callee.callers, j)
}

// classifyJobs decides paid, fallback and marker for every job, then the
// inventory class (precedence: fallback-cleanup, paid, exception,
// non-licensing-static).
func (a *analysis) classifyJobs() {
	for _, w := range a.wfs {
		if w.broken {
			continue
		}
		for _, j := range w.jobs {
			a.classifyJob(j)
		}
	}
	// A caller reaches the lock when its callee does (or is unreadable).
	for changed := true; changed; {
		changed = false
		for _, w := range a.wfs {
			for _, j := range w.jobs {
				if j.call == nil || j.paid {
					continue
				}
				if j.unresolved || (j.callee != nil && !j.callee.broken && j.callee.reachesLock()) {
					j.paid, changed = true, true
				}
			}
		}
	}
	for _, w := range a.wfs {
		if w.broken {
			continue
		}
		canary := w.dispatchOnly()
		for _, j := range w.jobs {
			switch {
			case j.fallback:
				j.class = FallbackCleanup
			case j.paid && canary:
				j.class = ControlledCanary
			case j.paid:
				j.class = PaidSerial
			default:
				j.class = NonLicensingStatic
				if j.marker {
					if ex, ok := a.activeException(w.path); ok {
						j.class = Class(ex.Classification)
					}
				}
			}
			a.rows = append(a.rows, InventoryRow{Path: w.path, Job: j.id, Class: j.class})
		}
	}
}

func (a *analysis) classifyJob(j *job) {
	hasAcquire := len(j.acquires()) > 0
	holderRelease := false
	for _, s := range j.steps {
		if s.is(ActRelease) && strings.TrimSpace(s.with["holder-id"]) != "" {
			holderRelease = true
		}
	}
	if holderRelease && !hasAcquire {
		j.fallback = true
		return
	}
	for _, s := range j.steps {
		if s.credential || s.activation || s.is(ActReturn) || s.is(ActAcquire) || s.is(ActAcquireWithCleanup) {
			j.paid = true
		}
		if s.marker || s.is(ActEditor) || s.is(ActClassifier) || s.is(ActCleanupGate) || (s.is(ActRelease) && !hasAcquire) || s.lock == "?" {
			j.marker = true
		}
		for _, l := range s.compositeLocks {
			if l == ActAcquire || l == ActAcquireWithCleanup {
				j.paid = true
			}
		}
	}
	if j.ast != nil && j.ast.Env != nil {
		for _, v := range j.ast.Env.Vars {
			if v != nil && v.Name != nil && v.Value != nil && (credNameRE.MatchString(v.Name.Value) || credentialRef(v.Value.Value)) {
				j.paid = true
			}
		}
	}
	if ls, ok := j.labels(); ok {
		for _, l := range ls {
			if strings.Contains(strings.ToLower(l), "unity") {
				j.marker = true
			}
		}
	}
}

// reachesLock reports whether any job of w takes or releases a seat.
func (w *workflow) reachesLock() bool {
	for _, j := range w.jobs {
		if j.paid || j.fallback {
			return true
		}
	}
	return false
}

// dispatchOnly reports whether workflow_dispatch is the only trigger
// (callers' triggers included).
func (w *workflow) dispatchOnly() bool {
	ts := w.triggers(map[*workflow]bool{})
	if len(ts) == 0 {
		return false
	}
	for _, t := range ts {
		if t.name != "workflow_dispatch" {
			return false
		}
	}
	return true
}

// workflowRules applies rules 2-10 to the jobs of w.
func (a *analysis) workflowRules(w *workflow) {
	reaches := false
	for _, j := range w.jobs {
		if j.paid || j.fallback {
			reaches = true
		}
	}
	if reaches {
		a.workflowCancellation(w)
	}
	for _, j := range w.jobs {
		switch {
		case j.fallback:
			a.jobCancellation(j)
		case j.paid && j.call != nil:
			a.jobCancellation(j)
		case j.paid:
			a.jobCancellation(j)
			a.licensedRules(j)
		case j.marker:
			if _, ok := a.activeException(w.path); !ok && !a.expiredException(w.path) {
				a.add(UnreviewedUnityReference, w.path, j.id, j.line())
			}
		}
	}
	licensed := false
	for _, j := range w.jobs {
		if j.fallback {
			a.fallbackShape(j)
		}
		if j.paid && j.call == nil {
			licensed = true
		}
	}
	if licensed {
		a.gatekeeperRules(w)
	}
}
